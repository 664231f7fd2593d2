// Each chat message's actions (on hover, on focus, and on a long press on a phone): Copy, Edit
// (a person's message), Regenerate (an answer), Rewind to here and Fork from here, with the
// confirmation and preview the Time Travel page shows; and ‹n/m› on a turn that has versions,
// switching to another version in place. Driven by chat.js's "kazma:message" event only: it
// fills each message's .msg-actions and .msg-versions slots and never touches the rest.
"use strict";

(() => {
  const { t, api, el, errorText, notice, number, confirmBox, offerUndo } = Kazma;
  const LONG_PRESS_MS = 500;
  const chatPath = (id) => `/api/chats/${encodeURIComponent(id)}`;
  const noticeNode = () => document.getElementById("notice");
  // One read of the chat's points (where rewinding to each message goes) and versions per batch
  // of announced messages: chat.js redraws the whole transcript at once.
  let batch = null;
  // The chat's turns with versions (GET .../versions), as last read: what an edit or a regenerate
  // says it will make ("version 3/3; the original stays 2/3").
  let known = { chat: null, turns: [] };
  // The message being edited, kept across redraws of the transcript (chat.js redraws it whole).
  let editing = null;

  function effectText(effect) {
    if (effect.kind === "file_written") return t("effect_file_written", { path: (effect.args || {}).path || "?" });
    return `${effect.kind}: ${effect.tool || ""}`;
  }

  // Open another chat in place: chat.js follows the address (its popstate handler).
  function open(thread) {
    history.pushState({ thread }, "", `/?thread=${encodeURIComponent(thread)}`);
    window.dispatchEvent(new PopStateEvent("popstate", { state: { thread } }));
  }

  async function rewind(chat, row, point) {
    notice(noticeNode(), "");
    let preview;
    try {
      preview = await api("GET", `/api/replay/snapshots/${encodeURIComponent(chat)}/${encodeURIComponent(point.snapshot_id)}/preview`);
    } catch (err) {
      notice(noticeNode(), errorText(err));
      return;
    }
    const effects = preview.side_effects;
    const sure = await confirmBox({
      title: t("confirm_rewind_title"),
      body: [
        el("p", {}, t(row.role === "user" ? "confirm_rewind_before" : "confirm_rewind_after")),
        el("p", {}, t("takes_back", { turns: number(preview.later_turns), steps: number(preview.later_steps) })),
        effects.length
          ? el("div", { class: "effects" }, el("p", {}, t("not_undone")), el("ul", {}, effects.map((e) => el("li", {}, effectText(e)))))
          : el("p", { class: "muted" }, t("no_side_effects")),
      ],
      confirmLabel: t("msg_rewind"),
      danger: true,
    });
    if (!sure) return;
    try {
      const restored = await api("POST", "/api/replay/restore", { thread_id: chat, message_id: row.id });
      const message = t("rewound", { removed: number(restored.removed_steps) });
      // The chat reloads on its own (its stream says "restored"); the undo is offered here too.
      setTimeout(() => {
        if (restored.undo) offerUndo(noticeNode(), message, chat);
        else notice(noticeNode(), message, "ok");
      }, 300);
    } catch (err) {
      notice(noticeNode(), errorText(err));
    }
  }

  async function fork(chat, row, point) {
    notice(noticeNode(), "");
    const sure = await confirmBox({
      title: t("confirm_fork_here_title"),
      body: [el("p", {}, t(point.empty ? "confirm_fork_empty" : "confirm_fork"))],
      confirmLabel: t("msg_fork"),
    });
    if (!sure) return;
    try {
      const forked = await api("POST", "/api/replay/fork", { thread_id: chat, message_id: row.id });
      location.assign(`/?thread=${encodeURIComponent(forked.thread_id)}`);
    } catch (err) {
      notice(noticeNode(), errorText(err));
    }
  }

  async function makeVersion(chat, row, kind, text) {
    notice(noticeNode(), t("msg_working"), "info");
    try {
      const body = kind === "edit" ? { text } : undefined;
      const made = await api("POST", `${chatPath(chat)}/messages/${row.id}/${kind}`, body);
      // A new chat in the lists (in place of this one): the page opens afresh on it.
      location.assign(`/?thread=${encodeURIComponent(made.thread_id)}`);
    } catch (err) {
      notice(noticeNode(), errorText(err));
    }
  }

  // Where a new version of this message's turn goes: the one shown now stays n/m, the new one is m/m.
  function versionPlace(chat, row) {
    const turn = known.chat === chat ? known.turns.find((v) => v.turn_index === row.turn_index) : null;
    const m = (turn ? turn.versions.length : 1) + 1;
    return { n: number(turn ? turn.current + 1 : 1), m: number(m), new: number(m) };
  }

  // Edit in place: the message's body becomes a box with its text, saying what sending makes;
  // Ctrl/Cmd+Enter sends, Escape cancels.
  function startEdit(node, chat, row, value = row.text) {
    const body = node.querySelector(".msg-body");
    if (!body || node.querySelector(".msg-edit")) return;
    const box = el("textarea", { class: "msg-edit-text", rows: 3, dir: "auto", "aria-label": t("msg_edit_label") });
    box.value = value;
    editing = { chat, id: row.id, value };
    box.addEventListener("input", () => { if (editing && editing.id === row.id) editing.value = box.value; });
    const save = el("button", { type: "submit", class: "primary msg-save" }, t("msg_save_edit"));
    const cancel = el("button", { type: "button", class: "msg-cancel" }, t("msg_cancel_edit"));
    const note = el("p", { class: "msg-edit-note" }, t("msg_edit_note", versionPlace(chat, row)));
    const form = el("form", { class: "msg-edit" }, box, note, el("div", { class: "buttons" }, save, cancel));
    body.hidden = true;
    body.after(form);
    const stop = () => { editing = null; form.remove(); body.hidden = false; };
    cancel.addEventListener("click", stop);
    box.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        event.stopPropagation(); // not the page's Escape (which stops a running turn)
        stop();
        node.querySelector('[data-action="edit"]')?.focus();
      } else if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && !event.isComposing) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const text = box.value.trim();
      if (!text) return;
      save.disabled = cancel.disabled = true;
      editing = null;
      await makeVersion(chat, row, "edit", text);
      save.disabled = cancel.disabled = false;
    });
    box.focus();
  }

  // Regenerate asks first, saying what it makes and that the answer shown now stays reachable.
  async function regenerate(chat, row) {
    notice(noticeNode(), "");
    const sure = await confirmBox({
      title: t("confirm_regenerate_title"),
      body: [el("p", {}, t("confirm_regenerate", versionPlace(chat, row)))],
      confirmLabel: t("msg_regenerate"),
    });
    if (sure) await makeVersion(chat, row, "regenerate");
  }

  async function copy(button, row) {
    try {
      await navigator.clipboard.writeText(row.text);
    } catch (err) {
      // No clipboard (an insecure origin, or refused): select the text for a manual copy.
      const range = document.createRange();
      range.selectNodeContents(button.closest(".msg").querySelector(".msg-body"));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
    }
    button.textContent = t("msg_copied");
    setTimeout(() => { button.textContent = t("msg_copy"); }, 1500);
  }

  function actionButton(name, label, handler) {
    const button = el("button", { type: "button", class: `msg-action msg-action-${name}`, "data-action": name }, label);
    button.addEventListener("click", (event) => { event.stopPropagation(); handler(button); });
    return button;
  }

  function fillActions(node, chat, row, point) {
    const slot = node.querySelector(".msg-actions");
    if (!slot) return;
    const buttons = [actionButton("copy", t("msg_copy"), (b) => copy(b, row))];
    if (row.role === "user") buttons.push(actionButton("edit", t("msg_edit"), () => startEdit(node, chat, row)));
    if (row.role === "assistant") buttons.push(actionButton("regenerate", t("msg_regenerate"), () => regenerate(chat, row)));
    if (point && point.kept) {
      if (!point.empty) buttons.push(actionButton("rewind", t("msg_rewind"), () => rewind(chat, row, point)));
      buttons.push(actionButton("fork", t("msg_fork"), () => fork(chat, row, point)));
    } else if (point === null) {
      slot.title = t("msg_not_kept");
    }
    slot.setAttribute("role", "toolbar");
    slot.setAttribute("aria-label", t("msg_actions"));
    slot.replaceChildren(...buttons);
  }

  // ‹n/m› on the turn's first message (a person's, where there is one).
  function fillVersions(node, turn) {
    const slot = node.querySelector(".msg-versions");
    if (!slot) return;
    const n = turn.current + 1;
    const m = turn.versions.length;
    const prev = el("button", { type: "button", class: "versions-prev", "aria-label": t("versions_prev"), disabled: n <= 1 }, "‹");
    const next = el("button", { type: "button", class: "versions-next", "aria-label": t("versions_next"), disabled: n >= m }, "›");
    prev.addEventListener("click", () => open(turn.versions[turn.current - 1]));
    next.addEventListener("click", () => open(turn.versions[turn.current + 1]));
    slot.replaceChildren(prev, el("span", { class: "versions-at", title: t("versions_switch", { n, m }) }, `${number(n)}/${number(m)}`), next);
  }

  async function apply(current) {
    const { chat, items } = current;
    let points = [];
    let turns = [];
    try {
      [points, turns] = await Promise.all([
        api("GET", `/api/replay/messages/${encodeURIComponent(chat)}`).then((r) => r.messages),
        api("GET", `${chatPath(chat)}/versions`).then((r) => r.turns),
      ]);
    } catch (err) {
      points = [];
    }
    known = { chat, turns };
    const byId = new Map(points.map((p) => [p.message_id, p]));
    // Filled after chat.js scrolled: what the person sees stays put against the newest message.
    const box = document.getElementById("transcript");
    const fromBottom = box ? box.scrollHeight - box.scrollTop : 0;
    const firstOfTurn = new Map();
    for (const { node, row } of items) {
      if (!node.isConnected) continue;
      fillActions(node, chat, row, byId.get(row.id) || null);
      if (editing && editing.chat === chat && editing.id === row.id) startEdit(node, chat, row, editing.value);
      const known = firstOfTurn.get(row.turn_index);
      if (!known || (known.row.role !== "user" && row.role === "user")) firstOfTurn.set(row.turn_index, { node, row });
    }
    for (const turn of turns) {
      const at = firstOfTurn.get(turn.turn_index);
      if (at) fillVersions(at.node, turn);
    }
    if (box) box.scrollTop = box.scrollHeight - fromBottom;
  }

  // A long press (a phone has no hover) shows the message's actions; a tap elsewhere hides them.
  function longPress(node) {
    let timer = null;
    const cancel = () => { clearTimeout(timer); timer = null; };
    node.addEventListener("pointerdown", (event) => {
      if (event.pointerType === "mouse" || event.target.closest("button, textarea, a")) return;
      cancel();
      timer = setTimeout(() => {
        for (const other of document.querySelectorAll(".msg.show-actions")) other.classList.remove("show-actions");
        node.classList.add("show-actions");
      }, LONG_PRESS_MS);
    });
    for (const type of ["pointerup", "pointercancel", "pointerleave", "pointermove"]) {
      node.addEventListener(type, (event) => {
        if (type === "pointermove" && Math.hypot(event.movementX || 0, event.movementY || 0) < 8) return;
        cancel();
      });
    }
    node.addEventListener("contextmenu", (event) => { if (node.classList.contains("show-actions")) event.preventDefault(); });
  }

  document.addEventListener("pointerdown", (event) => {
    for (const shown of document.querySelectorAll(".msg.show-actions")) {
      if (!shown.contains(event.target)) shown.classList.remove("show-actions");
    }
  });

  document.addEventListener("kazma:message", (event) => {
    const { node, row, chat } = event.detail;
    // A message without its transcript id yet (it came on the stream) gets its actions once read again.
    if (!chat || !row || row.id === undefined || row.id === null) return;
    if (!["user", "assistant", "error", "stopped"].includes(row.role)) return;
    node.classList.add("has-actions");
    longPress(node);
    // The toolbar at once (its place in the layout is taken before chat.js scrolls); the
    // actions that need the message's step follow once its point is read.
    fillActions(node, chat, row, undefined);
    if (!batch || batch.chat !== chat) {
      batch = { chat, items: [] };
      const current = batch;
      setTimeout(() => { if (batch === current) batch = null; apply(current); }, 0);
    }
    batch.items.push({ node, row });
  });
})();
