// The Time Travel page: a chat's saved steps turn by turn; read one, restore to it (after
// its preview), fork it into a new chat, or compare two. Every refusal is shown as its sentence.
"use strict";

(() => {
  const { t, tn, api, el, fill, errorText, notice, offerUndo, stepLabel, shortId, number, time, size, confirmBox } = Kazma;
  const $ = (id) => document.getElementById(id);
  const nodes = {
    select: $("thread-select"), openChat: $("open-chat"), notice: $("notice"), noChats: $("no-chats"),
    count: $("steps-count"), turns: $("turns"), detail: $("step-detail"),
    tabSteps: $("tab-steps"), tabCompare: $("tab-compare"), panelSteps: $("panel-steps"), panelCompare: $("panel-compare"),
    compareForm: $("compare-form"), compareA: $("compare-a"), compareB: $("compare-b"), compareRun: $("compare-run"),
    compareBThread: $("compare-b-thread"),
    compareResult: $("compare-result"), compareText: $("compare-text"), compareDiff: $("compare-diff"),
  };
  const state = { thread: null, listing: null, open: null, chats: [] };
  const stepsPath = (thread) => `/api/replay/snapshots/${encodeURIComponent(thread)}`;
  const showError = (err) => notice(nodes.notice, errorText(err));
  const labelOf = (info) => stepLabel(info.turn_index, info.iteration);

  // -- picking a chat ---------------------------------------------------------------------------
  async function loadChats() {
    const [chats, threads] = await Promise.all([api("GET", "/api/chats"), api("GET", "/api/replay/threads")]);
    const steps = new Map(threads.threads.map((th) => [th.thread_id, th.steps]));
    state.chats = chats.chats;
    nodes.noChats.hidden = chats.chats.length > 0;
    nodes.select.replaceChildren(...chats.chats.map((chat) =>
      el("option", { value: chat.thread_id }, t("chat_option", { title: chat.title, count: number(steps.get(chat.thread_id) || 0) }))));
    const asked = new URLSearchParams(location.search).get("thread");
    const known = (id) => chats.chats.some((chat) => chat.thread_id === id);
    const first = threads.threads.find((th) => known(th.thread_id));
    return known(asked) ? asked : first ? first.thread_id : chats.chats.length ? chats.chats[0].thread_id : asked;
  }

  async function pick(thread) {
    state.thread = thread;
    state.open = null;
    nodes.select.value = thread || "";
    nodes.openChat.hidden = !thread;
    if (thread) {
      nodes.openChat.href = `/?thread=${encodeURIComponent(thread)}`;
      history.replaceState(null, "", `/replay?thread=${encodeURIComponent(thread)}`);
    }
    nodes.detail.replaceChildren(el("p", { class: "muted" }, t("pick_step")));
    nodes.compareResult.hidden = true;
    await loadSteps();
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

  function renderTurns() {
    const { snapshots, turns } = state.listing;
    nodes.count.textContent = snapshots.length ? t("steps_count", { count: number(snapshots.length) }) : t("no_steps");
    nodes.turns.replaceChildren(...turns.map((turn) => el("section", { class: "turn", "data-turn": turn.turn_index },
      el("h3", {}, t("turn_heading", { turn: turn.turn_index })),
      el("p", { class: "questions", dir: "auto" }, turn.questions.join(" / ")),
      el("ol", { class: "step-list" }, turn.steps.map((step) => {
        const button = el("button", {
          type: "button", class: "step-button", "data-snapshot": step.snapshot_id,
          "aria-pressed": step.snapshot_id === state.open ? "true" : "false",
        },
        el("span", { class: "step-label" }, stepLabel(turn.turn_index, step.step)),
        el("code", { class: "step-id" }, shortId(step.snapshot_id)),
        step.truncated ? el("span", { class: "badge warn" }, t("truncated_mark")) : null);
        button.addEventListener("click", () => openStep(step.snapshot_id));
        return el("li", {}, button);
      })))));
  }

  // -- one step -----------------------------------------------------------------------------------
  async function openStep(id) {
    notice(nodes.notice, "");
    state.open = id;
    for (const button of nodes.turns.querySelectorAll(".step-button")) {
      button.setAttribute("aria-pressed", button.dataset.snapshot === id ? "true" : "false");
    }
    try {
      renderDetail(await api("GET", `${stepsPath(state.thread)}/${encodeURIComponent(id)}`));
    } catch (err) {
      showError(err);
    }
  }

  function effectText(effect) {
    if (effect.kind === "file_written") return t("effect_file_written", { path: (effect.args || {}).path || "?" });
    return `${effect.kind}: ${effect.tool || ""} ${JSON.stringify(effect.args || {})}`;
  }

  function savedMessage(message) {
    const parts = [el("span", { class: "role" }, t(`role_${message.role}`))];
    if (message.text) parts.push(el("p", { class: "text", dir: "auto" }, clip(message.text)));
    for (const call of message.tool_calls || []) {
      parts.push(el("p", { class: "tool-call" }, tn("tool_call", { call: el("code", { dir: "ltr" }, `${call.name}(${JSON.stringify(call.args || {})})`) })));
    }
    if (message.side_effect) parts.push(el("p", { class: "effect" }, t("side_effect", { what: effectText(message.side_effect) })));
    return el("li", { class: `message ${message.role}`, "data-role": message.role }, parts);
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
    fill(nodes.detail,
      el("header", { class: "detail-head" },
        el("h2", {}, labelOf(info), " ", el("code", { class: "step-id" }, shortId(info.snapshot_id))),
        el("p", { class: "muted" }, tn("step_meta", {
          time: time(info.created_at), model: info.model, count: number(info.message_count), size: size(info.size),
        }))),
      info.truncated ? el("p", { class: "notice warn", id: "truncated-reason" }, t("truncated_reason")) : null,
      el("div", { class: "buttons" }, restore, fork),
      el("h3", {}, t("step_messages")),
      el("ol", { class: "messages saved" }, detail.messages.map(savedMessage)),
    );
  }

  async function restoreTo(info) {
    notice(nodes.notice, "");
    let preview;
    try {
      preview = await api("GET", `${stepsPath(state.thread)}/${encodeURIComponent(info.snapshot_id)}/preview`);
    } catch (err) {
      showError(err);
      return;
    }
    const effects = preview.side_effects;
    const sure = await confirmBox({
      title: t("confirm_restore_title", { label: `${labelOf(info)} (${shortId(info.snapshot_id)})` }),
      body: [
        el("p", {}, t("takes_back", { turns: number(preview.later_turns), steps: number(preview.later_steps) })),
        effects.length
          ? el("div", { class: "effects" }, el("p", {}, t("not_undone")), el("ul", {}, effects.map((e) => el("li", {}, effectText(e)))))
          : el("p", { class: "muted" }, t("no_side_effects")),
      ],
      confirmLabel: t("restore"),
      danger: true,
    });
    if (!sure) return;
    try {
      const restored = await api("POST", "/api/replay/restore", { thread_id: state.thread, snapshot_id: info.snapshot_id });
      await loadSteps();
      await openStep(info.snapshot_id);
      const message = t("restored", { label: labelOf(restored.snapshot), removed: number(restored.removed_steps) });
      if (restored.undo) offerUndo(nodes.notice, message, state.thread, loadSteps);
      else notice(nodes.notice, message, "ok");
    } catch (err) {
      showError(err);
    }
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
      showError(err);
    }
  }

  // -- comparing two steps --------------------------------------------------------------------------
  // The chats a step of this one can be compared with: those of its lineage (its source, its forks).
  function lineage() {
    const byId = new Map(state.chats.map((chat) => [chat.thread_id, chat]));
    const root = (id) => {
      for (let i = 0; i < 100 && byId.get(id) && byId.get(id).forked_from; i += 1) id = byId.get(id).forked_from.thread_id;
      return id;
    };
    const mine = root(state.thread);
    return state.chats.filter((chat) => chat.thread_id === state.thread || root(chat.thread_id) === mine);
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
      nodes.compareBThread.replaceChildren(...lineage().map((chat) => el("option", { value: chat.thread_id },
        chat.thread_id === state.thread ? t("compare_this_chat", { title: chat.title }) : chat.title)));
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

  function diffMessage(item) {
    return el("li", {}, el("span", { class: "muted" }, t("compare_position", { position: item.position }), " · ",
      t(`role_${item.role}`), ": "), el("span", { dir: "auto" }, clip(item.text || JSON.stringify(item.tool_calls || ""), 300)));
  }

  function renderComparison(result) {
    const m = result.messages;
    const section = (key, items, render) => items.length
      ? el("section", { class: `diff-${key}` }, el("h4", {}, t(`compare_${key}`)), el("ul", {}, items.map(render)))
      : null;
    const field = (key, a, b) => el("tr", {}, el("th", { scope: "row" }, t(key)),
      el("td", { dir: "ltr" }, JSON.stringify(a)), el("td", { dir: "ltr" }, JSON.stringify(a) === JSON.stringify(b) ? t("compare_same") : JSON.stringify(b)));
    const costs = Object.entries(result.cost).filter(([, v]) => v).map(([k, v]) => `${k} ${v > 0 ? "+" : ""}${v}`).join(", ");
    nodes.compareText.textContent = result.text;
    fill(nodes.compareDiff,
      el("p", { class: "counts" }, t("compare_counts", { added: m.added.length, removed: m.removed.length, changed: m.changed.length })),
      section("added", m.added, diffMessage),
      section("removed", m.removed, diffMessage),
      section("changed", m.changed, (item) => el("li", {}, el("span", { class: "muted" }, t("compare_position", { position: item.position }), ": "),
        el("span", { dir: "auto" }, clip(item.a.text, 200)), " → ", el("span", { dir: "auto" }, clip(item.b.text, 200)))),
      el("h4", {}, t("compare_fields")),
      el("table", { class: "fields" },
        el("thead", {}, el("tr", {}, el("th", {}), el("th", {}, labelOf(result.a)), el("th", {}, labelOf(result.b)))),
        el("tbody", {}, field("compare_plan", result.plan.a, result.plan.b), field("compare_model", result.model.a, result.model.b),
          el("tr", {}, el("th", { scope: "row" }, t("compare_cost")), el("td", { colspan: 2, dir: "ltr" }, costs || t("compare_same"))))),
    );
    nodes.compareResult.hidden = false;
  }

  nodes.compareForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    notice(nodes.notice, "");
    try {
      const other = nodes.compareBThread ? nodes.compareBThread.value : state.thread;
      renderComparison(await api("POST", "/api/replay/compare", {
        thread_id: state.thread, a: nodes.compareA.value, b: nodes.compareB.value,
        ...(other && other !== state.thread ? { b_thread_id: other } : {}),
      }));
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
