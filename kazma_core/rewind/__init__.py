"""A restore's and an undo's parts in the core (the rules a person meets are the rewind service's,
`kazma_ui/thread_rewind.py` and `kazma_ui/rewind_undo.py`):

- `rows`: kazma.db's side of restore, undo and fork: the durable intent, the rows taken back,
  kept aside, put back or copied;
- `keep`: what a restore kept aside for its undo, and the one rule of when it goes for good;
- `files`: a restore's files: what it would change in the person's folder, and putting it there;
- `finish`: a restore's and an undo's part outside kazma.db, and finishing the ones a crash cut.
"""
