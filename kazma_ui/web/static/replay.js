// The Time Travel page: a chat's saved steps turn by turn; read one, restore to it (after
// its preview), fork it into a new chat, or compare two. Every refusal is shown as its sentence.
"use strict";

(() => {
  const { t, tc, tn, api, el, fill, errorText, notice, offerUndo, stepLabel, shortId, number, time, size, confirmBox } = Kazma;
  const $ = (id) => document.getElementById(id);
  const nodes = {
    select: $("thread-select"), openChat: $("open-chat"), notice: $("notice"), noChats: $("no-chats"),
    count: $("steps-count"), turns: $("turns"), detail: $("step-detail"),
    tabSteps: $("tab-steps"), tabCompare: $("tab-compare"), panelSteps: $("panel-steps"), panelCompare: $("panel-compare"),
    compareForm: $("compare-form"), compareA: $("compare-a"), compareB: $("compare-b"), compareRun: $("compare-run"),
    compareBThread: $("compare-b-thread"),
    compareResult: $("compare-result"), compareDiff: $("compare-diff"),
    branches: $("branches"), branchTree: $("branch-tree"), branchesIntro: $("branches-intro"),
    versionPicker: $("version-picker"), versionSelect: $("version-select"),
  };
  // `versions`: every chat of the open chat's conversation, oldest first (GET /api/chats/{id}/versions:
  // `chats`; empty when it has one version); the list of chats shows each conversation once.
  const state = {
    thread: null, listing: null, open: null, chats: [], versions: [], steps: new Map(), source: null, timer: null, saved: null,
  };
  // A long step opens on its newest messages; older ones come a page at a time as the person scrolls up.
  const PAGE = 100;
  const OLDER_WHEN_PX = 80;
  const stepsPath = (thread) => `/api/replay/snapshots/${encodeURIComponent(thread)}`;
  // A refusal is shown as the error's own sentence (its message_id), unless the page names one of its own.
  const showError = (err, key) => notice(nodes.notice, key ? t(key) : errorText(err));
  const labelOf = (info) => stepLabel(info.turn_index, info.iteration);
  // What a step did ("calculated"), in the page's language, from its terms (steps.did_*); its
  // tools in people's words (tools_done.*, tools.*), as step_views.step_action says them.
  const strings = Kazma.config.strings;
  const toolWords = (group, name) => strings[`${group}.${name}`] ?? strings[`${group}.other`];
  const didOf = (step) => {
    const did = step.did || {};
    if (did.kind === "used") return (did.tools || []).map((name) => toolWords("tools_done", name)).join(t("steps.did_joiner"));
    const key = `steps.did_${did.kind}`;
    if (!did.kind || !(key in strings)) return step.action || "";
    const values = {};
    for (const [name, value] of Object.entries(did)) if (name !== "kind") values[name] = Array.isArray(value) ? value.join(", ") : value;
    if (did.kind === "approval") values.tool = toolWords("tools", did.tool);
    return t(key, values);
  };

  // -- picking a chat ---------------------------------------------------------------------------
  async function loadChats() {
    const [chats, threads] = await Promise.all([api("GET", "/api/chats"), api("GET", "/api/replay/threads")]);
    const steps = new Map(threads.threads.map((th) => [th.thread_id, th.steps]));
    state.chats = chats.chats;
    state.steps = steps;
    nodes.noChats.hidden = chats.chats.length > 0;
    nodes.select.replaceChildren(...chats.chats.map((chat) =>
      el("option", { value: chat.thread_id }, tc("chat_option", steps.get(chat.thread_id) || 0, { title: chat.title }))));
    if (state.thread) nodes.select.value = listedAs(state.thread);
    renderBranches();
    const asked = new URLSearchParams(location.search).get("thread");
    // An older version is not in the list of chats, but its steps are the person's to read.
    const known = (id) => chats.chats.some((chat) => chat.thread_id === id) || steps.has(id);
    const first = threads.threads.find((th) => known(th.thread_id));
    return known(asked) ? asked : first ? first.thread_id : chats.chats.length ? chats.chats[0].thread_id : asked;
  }

  async function pick(thread) {
    state.thread = thread;
    state.open = null;
    follow(thread);
    await loadVersions();
    renderBranches();
    nodes.select.value = listedAs(thread) || "";
    nodes.openChat.hidden = !thread;
    if (thread) {
      nodes.openChat.href = `/?thread=${encodeURIComponent(thread)}`;
      history.replaceState(null, "", `/replay?thread=${encodeURIComponent(thread)}`);
    }
    nodes.detail.replaceChildren(el("p", { class: "muted" }, t("pick_step")));
    nodes.compareResult.hidden = true;
    await loadSteps();
  }

  // -- live: the chat's own event stream (new steps, restores elsewhere, deletion) ---------------------
  function follow(thread) {
    if (state.source) state.source.close();
    state.source = null;
    if (!thread) return;
    const source = new EventSource(`/api/chats/${encodeURIComponent(thread)}/events`);
    state.source = source;
    const on = (type, handle) => source.addEventListener(type, (event) => {
      if (state.source === source && typeof event.data === "string") handle(JSON.parse(event.data));
    });
    on("snapshot", () => later());
    on("message", (data) => { if (data.role !== "user") later(); });
    on("reload", (data) => {
      if (data.reason === "deleted") {
        notice(nodes.notice, t("replay_chat_deleted"), "info");
        loadChats().then((first) => pick(first)).catch(showError);
        return;
      }
      if (data.reason === "restored" && data.snapshot_id !== state.restoring) notice(nodes.notice, t("replay_changed_elsewhere"), "info");
      later();
    });
  }

  // Several steps come in a burst: the list is read again once they have settled.
  function later() {
    clearTimeout(state.timer);
    state.timer = setTimeout(async () => {
      try {
        await loadChats();
        await loadVersions();
        renderBranches();
        await loadSteps();
        if (state.open && !state.listing.snapshots.some((s) => s.snapshot_id === state.open)) {
          state.open = null;
          nodes.detail.replaceChildren(el("p", { class: "muted" }, t("step_gone")));
        }
      } catch (err) {
        showError(err);
      }
    }, 250);
  }

  // A step gone meanwhile (another tab restored, a clean-up ran): say so, and show the list as it is now.
  async function stepGone(err) {
    if (err.code !== "not_found") return showError(err);
    showError(err, "step_gone");
    state.open = null;
    nodes.detail.replaceChildren(el("p", { class: "muted" }, t("pick_step")));
    await loadSteps();
  }

  // -- versions: the chats Edit and Regenerate made of one conversation ------------------------------
  // The open chat's conversation; for a fork of a version the list does not show (an older one),
  // the conversation it was forked from, so that the fork has its place among them.
  async function loadVersions() {
    const thread = state.thread;
    let chats = [];
    const read = async (id) => (await api("GET", `/api/chats/${encodeURIComponent(id)}/versions`)).chats;
    if (thread) {
      try {
        chats = await read(thread);
        const listed = state.chats.find((c) => c.thread_id === thread);
        const from = listed && listed.forked_from && listed.forked_from.thread_id;
        if (!chats.length && from && !state.chats.some((c) => c.thread_id === from)) chats = await read(from);
      } catch (err) {
        showError(err);
      }
    }
    if (thread !== state.thread) return;
    state.versions = chats;
    renderVersionPicker();
  }

  // "version 2 of 3 · changed at turn 4" for a chat of the open conversation's versions, else null.
  function versionLabel(id) {
    const at = state.versions.findIndex((c) => c.thread_id === id);
    if (at < 0 || state.versions.length < 2) return null;
    const chat = state.versions[at];
    const label = t("versions_switch", { n: number(at + 1), m: number(state.versions.length) });
    return chat.version_of ? `${label} · ${t("version_changed_at", { turn: number(chat.turn_index) })}` : label;
  }

  // The entry of the list of chats that stands for this chat (its conversation's newest version).
  function listedAs(id) {
    if (state.chats.some((c) => c.thread_id === id)) return id;
    const listed = state.versions.find((v) => state.chats.some((c) => c.thread_id === v.thread_id));
    return listed ? listed.thread_id : id;
  }

  function renderVersionPicker() {
    const many = state.versions.length > 1 && state.versions.some((c) => c.thread_id === state.thread);
    nodes.versionPicker.hidden = !many;
    nodes.versionSelect.replaceChildren(...(many ? state.versions : []).map((chat) =>
      el("option", { value: chat.thread_id }, versionLabel(chat.thread_id))));
    if (many) nodes.versionSelect.value = state.thread;
  }
  nodes.versionSelect.addEventListener("change", () => pick(nodes.versionSelect.value).catch(showError));

  // Every chat the page knows: the open conversation's versions (oldest first), then the list's chats.
  function allChats() {
    const versions = new Set(state.versions.map((c) => c.thread_id));
    return state.versions.concat(state.chats.filter((c) => !versions.has(c.thread_id)));
  }

  // -- the branch tree: the chat's versions side by side, the forks of each and theirs, with the step each came from --
  function renderBranches() {
    const all = allChats();
    const byId = new Map(all.map((c) => [c.thread_id, c]));
    const versions = new Set(state.versions.map((c) => c.thread_id));
    const first = state.versions[0];
    // A version sits beside the conversation's first chat (under what that was forked from, if
    // anything), not under the version it was made from.
    const parentOf = (chat) => {
      const from = versions.has(chat.thread_id) ? first.forked_from : chat.forked_from;
      return from && byId.has(from.thread_id) ? from.thread_id : null;
    };
    let root = byId.get(state.thread);
    if (!root) { nodes.branches.hidden = true; return; }
    const seen = new Set();
    for (let up = parentOf(root); up && !seen.has(up); up = parentOf(root)) {
      seen.add(up);
      root = byId.get(up);
    }
    const children = (id) => all.filter((c) => parentOf(c) === id);
    const node = (chat, depth) => {
      const from = chat.forked_from;
      const here = chat.thread_id === state.thread;
      const link = el("a", {
        href: `/replay?thread=${encodeURIComponent(chat.thread_id)}`, class: "branch-link", "data-thread": chat.thread_id,
        "aria-current": here ? "page" : null,
      }, el("bdi", { class: "branch-title" }, chat.title));
      link.addEventListener("click", (event) => { event.preventDefault(); pick(chat.thread_id).catch(showError); });
      const meta = [tc("branch_steps", state.steps.get(chat.thread_id) || 0)];
      const version = versionLabel(chat.thread_id);
      if (version) meta.unshift(version);
      else if (from && from.turn_index !== null && from.turn_index !== undefined && depth > 0) {
        meta.unshift(t("branch_from", { label: stepLabel(from.turn_index, from.iteration) }));
      }
      const kids = depth < 20 ? children(chat.thread_id) : [];
      return el("li", { class: `branch${version ? " version" : ""}`, "data-thread": chat.thread_id }, link,
        el("span", { class: "branch-meta muted" }, meta.join(" · ")),
        kids.length ? el("ul", {}, kids.map((kid) => node(kid, depth + 1))) : null);
    };
    const top = versions.has(root.thread_id) ? state.versions : [root];
    nodes.branches.hidden = top.length < 2 && !children(root.thread_id).length;
    nodes.branchesIntro.textContent = t(state.versions.length > 1 ? "branches_intro_versions" : "branches_intro");
    nodes.branchTree.replaceChildren(...top.map((chat) => node(chat, 0)));
  }

  // -- the steps, turn by turn ---------------------------------------------------------------------
  async function loadSteps() {
    if (!state.thread) {
      nodes.turns.replaceChildren();
      nodes.count.textContent = "";
      return;
    }
    try {
      state.listing = await api("GET", stepsPath(state.thread));
    } catch (err) {
      state.listing = { snapshots: [], turns: [] };
      showError(err);
    }
    renderTurns();
    renderCompareChoices();
  }

  function stepButton(turn, step) {
    const button = el("button", {
      type: "button", class: "step-button", "data-snapshot": step.snapshot_id,
      "aria-pressed": step.snapshot_id === state.open ? "true" : "false",
    },
    el("span", { class: "step-label" }, stepLabel(turn.turn_index, step.step)),
    el("code", { class: "step-id", dir: "ltr" }, shortId(step.snapshot_id)),
    didOf(step) ? el("span", { class: "step-did muted" }, didOf(step)) : null,
    step.truncated ? el("span", { class: "badge warn", title: t("truncated_reason") }, t("truncated_mark")) : null);
    button.addEventListener("click", () => openStep(step.snapshot_id));
    return el("li", {}, button);
  }

  // The steps of a turn, with a line where the long-turn rule left some out.
  function stepItems(turn) {
    const items = [];
    let previous = null;
    for (const step of turn.steps) {
      if (previous !== null && step.step > previous + 1) {
        const from = previous + 1, to = step.step - 1;
        items.push(el("li", { class: "gap muted", "data-gap": `${from}-${to}` },
          t(from === to ? "gap_one" : "gap_many", { from: number(from), to: number(to) })));
      }
      items.push(stepButton(turn, step));
      previous = step.step;
    }
    return items;
  }

  function renderTurns() {
    const { snapshots, turns } = state.listing;
    nodes.count.textContent = snapshots.length ? t("steps_count", { count: number(snapshots.length) }) : t("no_steps");
    // Why steps were saved cut is said once, under the first turn that has one.
    const firstCut = turns.find((turn) => turn.steps.some((step) => step.truncated));
    nodes.turns.replaceChildren(...turns.map((turn) => el("section", { class: "turn", "data-turn": turn.turn_index },
      el("h3", {}, t("turn_heading", { turn: turn.turn_index })),
      el("p", { class: "questions", dir: "auto" }, turn.questions.join(" / ")),
      el("ol", { class: "step-list" }, stepItems(turn)),
      turn === firstCut ? el("p", { class: "cut-note notice warn" }, t("cut_explained")) : null)));
  }


  // -- one step -----------------------------------------------------------------------------------
  async function openStep(id) {
    notice(nodes.notice, "");
    state.open = id;
    for (const button of nodes.turns.querySelectorAll(".step-button")) {
      button.setAttribute("aria-pressed", button.dataset.snapshot === id ? "true" : "false");
    }
    try {
      renderDetail(await api("GET", `${stepsPath(state.thread)}/${encodeURIComponent(id)}?limit=${PAGE}`));
      const box = nodes.detail.getBoundingClientRect();
      if (box.top < 0 || box.bottom > innerHeight) nodes.detail.scrollIntoView({ block: "start" });
    } catch (err) {
      await stepGone(err);
    }
  }

  function effectText(effect) {
    if (effect.kind === "file_written") return t("effect_file_written", { path: (effect.args || {}).path || "?" });
    return `${effect.kind}: ${effect.tool || ""} (${KazmaCompare.valueText(effect.args || {})})`;
  }

  // `added`: the message is new since the chat's previous step (what this step added).
  function savedMessage(message, added) {
    const parts = [el("span", { class: "role" }, t(`role_${message.role}`))];
    if (added) parts.push(el("span", { class: "added-mark" }, t("step_added")));
    if (message.text) parts.push(el("p", { class: "text", dir: Kazma.textDir(message.text) }, clip(message.text)));
    for (const call of message.tool_calls || []) {
      parts.push(el("p", { class: "tool-call" }, tn("tool_call", { call: el("bdi", { dir: "ltr" }, el("code", {}, call.text || call.name)) })));
    }
    if (message.side_effect) parts.push(el("p", { class: "effect" }, t("side_effect", { what: effectText(message.side_effect) })));
    return el("li", { class: `message ${message.role}${added ? " added" : ""}`, "data-role": message.role }, parts);
  }

  // The control between the conversation before the step and what the step added: folded, the
  // earlier messages are behind it ("Show the 74 earlier messages"); open, it folds them again.
  function foldToggle(saved) {
    const toggle = el("button", { type: "button", class: "fold-toggle", "aria-expanded": String(!saved.folded), "aria-controls": "saved-messages" },
      saved.folded ? tc("step_fold_show", saved.addedFrom) : t("step_fold_hide"));
    toggle.addEventListener("click", () => {
      saved.folded = !saved.folded;
      renderSaved(saved.folded ? "end" : "fold");
      saved.list.querySelector(".fold-toggle").focus({ preventScroll: true });
      setTimeout(fillSaved);
    });
    return el("li", { class: "fold" }, toggle);
  }

  // The step's messages read so far (a page, then older ones above it), in their scroll box; what
  // came before the step is folded until the person opens it.
  function savedItems(saved) {
    const items = [];
    const from = saved.folded ? saved.addedFrom : 0;
    if (!saved.folded && saved.first > 0) items.push(el("li", { class: "older-note muted" }, t("step_older", { count: number(saved.first) })));
    saved.messages.forEach((m, i) => {
      const at = saved.first + i;
      if (at < from) return;
      if (saved.addedFrom > 0 && at === Math.max(saved.addedFrom, saved.first)) items.push(foldToggle(saved));
      items.push(savedMessage(m, at >= saved.addedFrom));
    });
    const added = saved.first + saved.messages.length > saved.addedFrom;
    if (!added && saved.addedFrom > 0) items.push(foldToggle(saved), el("li", { class: "added-none muted" }, t("step_added_none")));
    return items;
  }

  // `place`: "end" shows the newest messages, "keep" keeps what the person was reading where it was
  // (older ones were put above it), "fold" puts the opened fold's control at the box's bottom, the
  // earlier messages just above it.
  function renderSaved(place = "end") {
    const saved = state.saved;
    const box = saved.box;
    const fromBottom = box.scrollHeight - box.scrollTop;
    saved.list.replaceChildren(...savedItems(saved));
    box.scrollTop = place === "keep" ? box.scrollHeight - fromBottom : box.scrollHeight;
    const toggle = saved.list.querySelector(".fold");
    if (place === "fold" && toggle) box.scrollTop += toggle.getBoundingClientRect().bottom - box.getBoundingClientRect().bottom;
  }

  // The page before the oldest message shown, when the person has scrolled up to it (or the
  // box is not full enough to scroll); while folded, only what the step added.
  async function loadOlderSaved() {
    const saved = state.saved;
    const until = saved && saved.folded ? saved.addedFrom : 0;
    if (!saved || saved.first <= until || saved.loading) return;
    saved.loading = true;
    try {
      const limit = Math.min(PAGE, saved.first - until);
      const older = await api("GET", `${stepsPath(state.thread)}/${encodeURIComponent(saved.id)}?before=${saved.first}&limit=${limit}`);
      if (state.saved !== saved) return;
      saved.messages = older.messages.concat(saved.messages);
      saved.first = older.first;
      renderSaved("keep");
      setTimeout(fillSaved);
    } catch (err) {
      if (state.saved === saved) await stepGone(err);
    } finally {
      saved.loading = false;
    }
  }

  function fillSaved() {
    const saved = state.saved;
    if (saved && saved.box.scrollHeight <= saved.box.clientHeight + OLDER_WHEN_PX) loadOlderSaved();
  }

  function clip(text, limit = 3000) {
    return text.length <= limit ? text : text.slice(0, limit - 1) + "…";
  }

  function renderDetail(detail) {
    const info = detail.snapshot;
    const restore = el("button", { type: "button", class: "primary", id: "restore-button", disabled: info.truncated }, t("restore_here"));
    const fork = el("button", { type: "button", id: "fork-button", disabled: info.truncated }, t("fork"));
    if (info.truncated) {
      restore.title = fork.title = t("truncated_reason");
    }
    restore.addEventListener("click", () => restoreTo(info));
    fork.addEventListener("click", () => forkFrom(info));
    const list = el("ol", { class: "messages saved" });
    const box = el("div", { class: "saved-scroll", id: "saved-messages" }, list);
    box.addEventListener("scroll", () => { if (box.scrollTop <= OLDER_WHEN_PX) loadOlderSaved(); });
    fill(nodes.detail,
      el("header", { class: "detail-head" },
        el("h2", {}, labelOf(info), " ", el("code", { class: "step-id" }, shortId(info.snapshot_id))),
        el("p", { class: "muted" }, tn("step_meta", {
          time: time(info.created_at), model: info.model, count: number(info.message_count), size: size(info.size),
        }))),
      didOf(info) ? el("p", { class: "step-did", id: "step-did" }, didOf(info)) : null,
      info.truncated ? el("p", { class: "notice warn", id: "truncated-reason" }, t("truncated_reason")) : null,
      el("div", { class: "buttons" }, restore, fork),
      el("h3", {}, t("step_messages")),
      box,
    );
    state.saved = {
      id: info.snapshot_id, messages: detail.messages, first: detail.first || 0,
      addedFrom: detail.added_from || 0, folded: true, list, box, loading: false,
    };
    renderSaved();
    setTimeout(fillSaved);
  }

  async function restoreTo(info) {
    notice(nodes.notice, "");
    let preview;
    try {
      preview = await api("GET", `${stepsPath(state.thread)}/${encodeURIComponent(info.snapshot_id)}/preview`);
    } catch (err) {
      await stepGone(err);
      return;
    }
    const effects = preview.side_effects;
    const files = preview.files || [];
    const choice = files.length ? restoreChoice(files) : null;
    const sure = await confirmBox({
      title: t("confirm_restore_title", { label: `${labelOf(info)} (${shortId(info.snapshot_id)})` }),
      body: [
        el("p", {}, t("takes_back", { turns: number(preview.later_turns), steps: number(preview.later_steps) })),
        effects.length
          ? el("div", { class: "effects" }, el("p", {}, t("not_undone")), el("ul", {}, effects.map((e) => el("li", {}, effectText(e)))))
          : el("p", { class: "muted" }, t("no_side_effects")),
        ...(choice ? [choice.node] : []),
      ],
      confirmLabel: t("restore"),
      danger: true,
    });
    if (!sure) return;
    const what = choice ? choice.value() : "conversation";
    const ask = (force) => api("POST", "/api/replay/restore", { thread_id: state.thread, snapshot_id: info.snapshot_id, what, force });
    try {
      state.restoring = info.snapshot_id; // its reload event is this page's own news
      let restored;
      try {
        restored = await ask(false);
      } catch (err) {
        if (err.code !== "files_changed") throw err;
        // Files someone else changed: said by name, and overwritten only once the person confirms.
        const overwrite = await confirmBox({
          title: t("files_changed_title"), body: [el("p", { id: "files-changed" }, errorText(err))],
          confirmLabel: t("overwrite_files"), danger: true,
        });
        if (!overwrite) return;
        restored = await ask(true);
      }
      await loadChats();
      await loadSteps();
      await openStep(info.snapshot_id);
      const message = t("restored", { label: labelOf(restored.snapshot), removed: number(restored.removed_steps) })
        + ((restored.files || []).length ? ` ${t("restored_files", { count: number(restored.files.length) })}` : "");
      if (restored.undo) offerUndo(nodes.notice, message, state.thread, loadSteps);
      else notice(nodes.notice, message, "ok");
    } catch (err) {
      await stepGone(err);
    }
  }

  // What a restore takes back when the chat's tools changed files after the step: the conversation
  // (as before), the files, or both; each file listed with what would happen to it and its diff.
  const WHAT_LABELS = { conversation: "restore_conversation", files: "restore_files", both: "restore_both" };
  function restoreChoice(files) {
    const options = Object.keys(WHAT_LABELS).map((value) => {
      const input = el("input", { type: "radio", name: "restore-what", value, id: `restore-what-${value}` });
      if (value === "conversation") input.checked = true;
      return el("label", { for: input.id }, input, " ", t(WHAT_LABELS[value]));
    });
    const list = el("ul", { class: "restore-files", id: "restore-files" }, files.map((f) => el("li", { "data-path": f.path },
      el("code", {}, f.path), " ", t(f.change === "removed" ? "file_removed" : "file_restored"),
      f.changed_since ? el("strong", { class: "changed-since" }, " ", t("file_changed_since")) : "",
      f.diff ? el("details", {}, el("summary", {}, t("file_diff")), el("pre", { class: "diff" }, f.diff)) : "",
    )));
    const node = el("fieldset", { class: "restore-what", id: "restore-what" },
      el("legend", {}, t("restore_what")), el("div", { class: "buttons" }, options),
      el("p", {}, t("files_would_change")), list);
    return { node, value: () => (node.querySelector("input[name=restore-what]:checked") || {}).value || "conversation" };
  }

  async function forkFrom(info) {
    notice(nodes.notice, "");
    const sure = await confirmBox({
      title: t("confirm_fork_title", { label: `${labelOf(info)} (${shortId(info.snapshot_id)})` }),
      body: [el("p", {}, t("confirm_fork"))],
      confirmLabel: t("fork"),
    });
    if (!sure) return;
    try {
      const forked = await api("POST", "/api/replay/fork", { thread_id: state.thread, snapshot_id: info.snapshot_id });
      location.assign(`/?thread=${encodeURIComponent(forked.thread_id)}`);
    } catch (err) {
      await stepGone(err);
    }
  }

  // -- comparing two steps --------------------------------------------------------------------------
  // The chats a step of this one can be compared with: those of its lineage (its source, its forks).
  function lineage() {
    const chats = allChats();
    const byId = new Map(chats.map((chat) => [chat.thread_id, chat]));
    const root = (id) => {
      for (let i = 0; i < 100 && byId.get(id) && byId.get(id).forked_from; i += 1) id = byId.get(id).forked_from.thread_id;
      return id;
    };
    const mine = root(state.thread);
    return chats.filter((chat) => chat.thread_id === state.thread || root(chat.thread_id) === mine);
  }

  const stepOptions = (snapshots) => snapshots.map((info) =>
    el("option", { value: info.snapshot_id }, `${labelOf(info)} · ${shortId(info.snapshot_id)}`));

  async function pickCompareChat(thread) {
    let snapshots = state.listing.snapshots;
    if (thread !== state.thread) {
      try {
        snapshots = (await api("GET", stepsPath(thread))).snapshots;
      } catch (err) {
        showError(err);
        snapshots = [];
      }
    }
    nodes.compareB.replaceChildren(...stepOptions(snapshots));
    if (snapshots.length) nodes.compareB.value = snapshots[snapshots.length - 1].snapshot_id;
  }
  if (nodes.compareBThread) nodes.compareBThread.addEventListener("change", () => pickCompareChat(nodes.compareBThread.value));

  function renderCompareChoices() {
    const options = () => stepOptions(state.listing.snapshots);
    if (nodes.compareBThread) {
      const name = (chat) => [chat.title, versionLabel(chat.thread_id)].filter(Boolean).join(" · ");
      nodes.compareBThread.replaceChildren(...lineage().map((chat) => el("option", { value: chat.thread_id },
        chat.thread_id === state.thread ? t("compare_this_chat", { title: name(chat) }) : name(chat))));
      nodes.compareBThread.value = state.thread || "";
    }
    nodes.compareA.replaceChildren(...options());
    nodes.compareB.replaceChildren(...options());
    const all = state.listing.snapshots;
    if (all.length) {
      nodes.compareA.value = all[0].snapshot_id;
      nodes.compareB.value = all[all.length - 1].snapshot_id;
    }
    nodes.compareRun.disabled = all.length < (lineage().length > 1 ? 1 : 2);
    nodes.compareRun.title = all.length < 2 ? t("compare_need_two") : "";
  }

  nodes.compareForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice(nodes.notice, "");
    try {
      const other = nodes.compareBThread ? nodes.compareBThread.value : state.thread;
      const result = await api("POST", "/api/replay/compare", {
        thread_id: state.thread, a: nodes.compareA.value, b: nodes.compareB.value,
        ...(other && other !== state.thread ? { b_thread_id: other } : {}),
      });
      KazmaCompare.render(result, nodes.compareDiff);
      nodes.compareResult.hidden = false;
    } catch (err) {
      showError(err);
    }
  });

  // -- tabs ----------------------------------------------------------------------------------------
  function showTab(compare) {
    nodes.tabSteps.setAttribute("aria-selected", compare ? "false" : "true");
    nodes.tabCompare.setAttribute("aria-selected", compare ? "true" : "false");
    nodes.panelSteps.hidden = compare;
    nodes.panelCompare.hidden = !compare;
  }
  nodes.tabSteps.addEventListener("click", () => showTab(false));
  nodes.tabCompare.addEventListener("click", () => showTab(true));
  nodes.select.addEventListener("change", () => pick(nodes.select.value));

  (async () => {
    try {
      await pick(await loadChats());
    } catch (err) {
      showError(err);
    }
  })();
})();
