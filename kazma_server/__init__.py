"""The `kazma` command and the server process it starts: above every other package.

`kazma serve` composes the web app (kazma_ui/web), the chat-app bots (bots/) and the daily
clean-up's scheduler into one process (`kazma_server.app`); the other subcommands (users,
backups, migrations, the TUI, the Slack manifest) are here because the command is one.
"""
