// The web chat (its sidebar of chats is sidebar.js): the transcript with the reply streaming in
// over the chat's event stream, approval cards, and slash commands.
"use strict";

(() => {
  const { t, api, el, errorText, notice, stepLabel, time, confirmBox, textDir } = Kazma;
  const $ = (id) => document.getElementById(id);
  const nodes = {
    heading: $("chat-heading"), replayLink: $("chat-replay-link"),
    notice: $("notice"), empty: $("empty-chat"), messages: $("messages"), approvals: $("approvals"),
    status: $("status"), form: $("composer"), input: $("message-input"), send: $("send"), stop: $("stop"),
    transcript: $("transcript"),
  };
  const state = {
    current: null, source: null, ready: null, seq: 0, steps: [], rows: [], notes: [],
    running: false, ends: 0, pending: 0, more: false, loadingOlder: false, askedAgain: 0,
  };
  const COMMAND = /^\/([A-Za-z0-9_]{1,64})(?:@[A-Za-z0-9_]{1,64})?(?=\s|$)/;
  const READY_WAIT_MS = 3000;
  const LAST_CHAT = "kazma.lastChat";
  let opened = Promise.resolve(); // the chat the page opens with, once it is open
  // A long chat opens on its newest messages; older ones come a page at a time as the person scrolls up.
  const PAGE = 100;
  const OLDER_WHEN_PX = 80;
  // A running turn's question is written with its first step, a moment after the turn began: a read
  // between the two is asked again this often, this many times, until the question is in it.
  const QUESTION_AGAIN_MS = 200;
  const QUESTION_TRIES = 15;

  const chatPath = (id) => `/api/chats/${encodeURIComponent(id)}`;
  const replayHref = (id) => `/replay?thread=${encodeURIComponent(id)}`;
  const showError = (err) => notice(nodes.notice, errorText(err));

  // The conversation's heading and its link to Time Travel (the sidebar is sidebar.js's).
  function renderHead() {
    Sidebar.setCurrent(state.current);
    nodes.heading.textContent = Sidebar.title(state.current);
    nodes.replayLink.hidden = !state.current;
    if (state.current) nodes.replayLink.href = replayHref(state.current);
  }

  async function loadChats() {
    await Sidebar.load();
    renderHead();
  }

  // -- the transcript -----------------------------------------------------------------------
  // Every message has one layout (other scripts build on it, e.g. message_actions.js):
  // <article class="msg" data-id data-role data-turn> with .msg-head (its role and a .msg-versions
  // slot), .msg-tools (the turn's tool blocks), .msg-body (its text) and .msg-actions (a toolbar slot).
  // An answer comes as HTML the server rendered from its Markdown and sanitised (`row.html`); any other
  // message is its text. `content`: nodes of the page's own (a command's answer).
  function messageNode(row, content) {
    const role = row.role;
    let text = row.text;
    if (role === "stopped") { // said in the page's language
      text = stream.cut.has(row.turn_index) || typeof row.html === "string" ? t("stopped_while_answering") : t("errors.turn_stopped");
    }
    let body;
    if (content) body = el("div", { class: "msg-body text plain", dir: "auto" }, content);
    else if (typeof row.html === "string" && role !== "stopped") body = el("div", { class: "msg-body text rich", dir: textDir(text) }, MessageView.rich(row.html));
    else body = el("div", { class: "msg-body text plain", dir: textDir(text) }, text);
    const tools = el("div", { class: "msg-tools" });
    MessageView.fillTools(tools, row.tools || stream.tools.get(toolsKey(row)), replayHref(state.current));
    return el("article", {
      class: `msg message ${role}`, "data-role": role, "data-id": row.id ?? null, "data-turn": row.turn_index ?? null,
    },
    el("div", { class: "msg-head" }, el("span", { class: "role" }, t(`role_${role}`)), el("span", { class: "msg-versions" })),
    tools,
    body,
    el("div", { class: "msg-actions" }));
  }

  // -- the answer as it grows ------------------------------------------------------------------
  // `live`: the running turn's answer so far ({turn, text, tools}) and its node, drawn after the
  // transcript until the answer's own message comes. `cut`: what a stopped turn had said (by turn),
  // kept above its "stopped" note. `tools`: each turn's tool calls seen on the event stream, shown
  // on the message that ended the turn while the transcript's rows do not carry them.
  const stream = { live: null, node: null, cut: new Map(), tools: new Map() };
  const ENDS_TURN = new Set(["assistant", "stopped", "error"]);
  function toolsKey(row) { return ENDS_TURN.has(row.role) ? row.turn_index : null; }

  function liveTurn(turn) {
    if (!stream.live || stream.live.turn !== turn) {
      // A turn resumed after its approval card goes on with the tool calls it had made.
      stream.live = { turn, text: "", tools: new Map((stream.tools.get(turn) || []).map((tool) => [tool.call_id, tool])) };
      stream.node = null;
    }
    return stream.live;
  }

  function liveNode() {
    const live = stream.live;
    if (!stream.node) {
      stream.node = messageNode({ role: "assistant", turn_index: live.turn, text: "" });
      stream.node.classList.add("live");
      stream.node.setAttribute("aria-busy", "true");
    }
    const body = stream.node.querySelector(".msg-body");
    body.textContent = live.text;
    body.dir = textDir(live.text);
    MessageView.fillTools(stream.node.querySelector(".msg-tools"), [...live.tools.values()], replayHref(state.current));
    return stream.node;
  }

  // Draws the growing answer in place (a delta or a tool event), following it down when the person was at the end.
  function drawLive() {
    const follow = atEnd();
    const node = liveNode();
    if (node.parentNode !== nodes.messages || node !== nodes.messages.lastElementChild) nodes.messages.append(node);
    nodes.empty.hidden = true;
    if (follow) scrollDown();
  }

  // The turn ended: its answer came (drawn from its message), or it stopped or failed. What was said
  // before a stop stays, marked as stopped where it was cut.
  // The server keeps what a stopped answer had said on its "stopped" row (rendered: `html`); the
  // page keeps what it drew when the server's row has only the reason.
  function endLive(data) {
    if (data.role === "stopped" && typeof data.html === "string") stream.cut.set(data.turn_index, { html: data.html });
    const live = stream.live;
    if (!live || live.turn !== data.turn_index) return;
    if (live.tools.size) stream.tools.set(live.turn, [...live.tools.values()]);
    if (data.role !== "assistant" && live.text && !stream.cut.has(live.turn)) stream.cut.set(live.turn, { text: live.text });
    stream.live = null;
    stream.node = null;
  }

  // A stopped answer: what was said, marked where it was cut, with the turn's tool blocks.
  function cutNode(turn, tools) {
    const cut = stream.cut.get(turn);
    const node = messageNode({ role: "assistant", turn_index: turn, text: cut.text ?? "", html: cut.html, tools });
    node.classList.add("cut");
    node.querySelector(".msg-body").append(el("span", { class: "cut-mark" }, t("answer_stopped")));
    return node;
  }

  // Said once a message's node is in the page: `row` is its transcript row (or the event that brought it,
  // without an id until the transcript is read again), `chat` the chat's thread id.
  function announce(node, row) {
    document.dispatchEvent(new CustomEvent("kazma:message", { detail: { node, row, chat: state.current } }));
  }

  // A command answer's text with its commands and links isolated, so "/replay list" reads as typed in Arabic.
  function isolated(text) {
    const parts = [];
    let last = 0;
    for (const match of String(text).matchAll(/(https?:\/\/\S+|\/[a-z]+(?: (?:list|show|compare|clear|restore|off|<\w+>))*|\b[0-9a-f]{8,32}\b)/g)) {
      parts.push(text.slice(last, match.index), el("bdi", { dir: "ltr" }, match[0]));
      last = match.index + match[0].length;
    }
    parts.push(text.slice(last));
    return parts;
  }

  // Command answers are the page's own: kept beside the row they followed, across reloads.
  // `keepPlace`: older messages were put above, so what the person was reading stays where it was.
  // Otherwise the page follows the chat down only when the person was at its end: a read of the chat
  // that comes while they read older messages leaves them where they are.
  function renderTranscript(keepPlace = false) {
    const fromBottom = nodes.transcript.scrollHeight - nodes.transcript.scrollTop;
    const top = nodes.transcript.scrollTop;
    const follow = atEnd();
    const items = [];
    const notesAfter = (id) => state.notes.filter((n) => n.after === id).map((n) => n.node);
    items.push(...notesAfter(0));
    const drawn = [];
    const ended = stream.live && state.rows.find((row) => row.turn_index === stream.live.turn && ENDS_TURN.has(row.role));
    if (ended) endLive(ended); // the transcript has the turn's end before its event came
    for (const row of state.rows) {
      let shown = row;
      if (row.role === "stopped") {
        if (typeof row.html === "string") stream.cut.set(row.turn_index, { html: row.html });
        if (stream.cut.has(row.turn_index)) {
          items.push(cutNode(row.turn_index, row.tools));
          shown = { ...row, tools: [] }; // the tool blocks go with what was said
        }
      }
      const node = messageNode(shown);
      drawn.push([node, row]);
      items.push(node, ...notesAfter(row.id));
    }
    if (stream.live) items.push(liveNode());
    nodes.messages.replaceChildren(...items);
    for (const [node, row] of drawn) announce(node, row);
    nodes.empty.hidden = items.length > 0 || !!nodes.approvals.childElementCount;
    if (keepPlace) nodes.transcript.scrollTop = nodes.transcript.scrollHeight - fromBottom;
    else if (follow) scrollDown();
    else nodes.transcript.scrollTop = top;
  }

  function scrollDown() { nodes.transcript.scrollTop = nodes.transcript.scrollHeight; }
  function atEnd() { return nodes.transcript.scrollHeight - nodes.transcript.clientHeight - nodes.transcript.scrollTop < 40; }

  function addNote(...content) {
    const last = state.rows.length ? state.rows[state.rows.length - 1].id : 0;
    // The page's own note, not a message of the chat: not announced.
    const node = messageNode({ role: "command" }, content.flatMap((part) => typeof part === "string" ? isolated(part) : [part]));
    state.notes.push({ after: last, node });
    renderTranscript();
  }

  // A card not shown before is brought into view: it waits for the person's answer.
  function renderApprovals(cards) {
    const pending = cards.filter((card) => card.status === "pending");
    const shown = new Set([...nodes.approvals.children].map((node) => node.dataset.card));
    state.pending = pending.length;
    nodes.approvals.replaceChildren(...pending.map(approvalCard));
    if (pending.length) setWorking(false);
    nodes.empty.hidden = nodes.empty.hidden || pending.length > 0;
    if (pending.some((card) => !shown.has(card.card_id))) scrollDown();
  }

  function approvalCard(card) {
    const approve = el("button", { type: "button", class: "primary", "data-decision": "approve" }, t("approve"));
    const deny = el("button", { type: "button", class: "danger", "data-decision": "deny" }, t("deny"));
    const outcome = el("p", { class: "muted outcome", "aria-live": "polite" });
    const words = MessageView.approvalWords(card);
    const node = el("div", { class: "approval card", "data-card": card.card_id, "data-tool": card.tool },
      el("h3", {}, words.title), ...words.body,
      el("p", { class: "muted" }, t("approval_expires", { time: time(card.expires_at) })),
      el("div", { class: "buttons" }, approve, deny), outcome);
    const decide = async (decision) => {
      approve.disabled = deny.disabled = true;
      outcome.textContent = t("approval_sent", { decision: t(`decision_${decision}`) });
      setWorking(true);
      try {
        await api("POST", `${chatPath(state.current)}/approvals/${encodeURIComponent(card.card_id)}`, { decision });
      } catch (err) {
        showError(err);
        setWorking(false);
      }
      await refresh();
    };
    approve.addEventListener("click", () => decide("approve"));
    deny.addEventListener("click", () => decide("deny"));
    return node;
  }

  // Replaces what is shown with the server's transcript and cards; a late answer of an older refresh is dropped.
  // `initial`: the page has just (re)connected, so whether a turn runs is read from the server too.
  async function refresh(initial = false) {
    const id = state.current;
    if (!id) return;
    const seq = ++state.seq;
    const ends = state.ends;
    try {
      const [transcript, approvals] = await Promise.all([
        api("GET", `${chatPath(id)}/messages?limit=${PAGE}`), api("GET", `${chatPath(id)}/approvals`),
      ]);
      if (seq !== state.seq || id !== state.current) return;
      const page = transcript.messages;
      if (transcript.more) {
        // Older pages already read stay: what comes before the newest page changes only with the whole chat.
        const first = page[0].id;
        state.rows = state.rows.filter((row) => row.id < first).concat(page);
        if (state.rows[0].id === first) state.more = true;
      } else {
        state.rows = page;
        state.more = false;
      }
      renderTranscript();
      fillScreen();
      renderApprovals(approvals.approvals);
      // A turn that ended while this was asked is over, whatever the answer said.
      if (initial && ends === state.ends) setWorking(transcript.running && !state.pending);
      // While a turn runs, the newest row is its question: without it, the read came before it was written.
      const asking = transcript.running && page.at(-1)?.role !== "user";
      state.askedAgain = asking ? state.askedAgain + 1 : 0;
      if (asking && state.askedAgain <= QUESTION_TRIES) {
        setTimeout(() => { if (id === state.current && seq === state.seq) refresh(); }, QUESTION_AGAIN_MS);
      }
    } catch (err) {
      if (id === state.current) showError(err);
    }
  }

  // Too few messages shown to scroll, or the person is at the top: the next older page, until the
  // screen is full or none is left.
  function fillScreen() {
    const box = nodes.transcript;
    if (state.more && (box.scrollHeight <= box.clientHeight + OLDER_WHEN_PX || box.scrollTop < OLDER_WHEN_PX)) loadOlder();
  }

  // The page before the oldest message shown, when the person has scrolled up to it.
  async function loadOlder() {
    const id = state.current;
    if (!id || !state.more || state.loadingOlder || !state.rows.length) return;
    state.loadingOlder = true;
    const seq = state.seq;
    try {
      const older = await api("GET", `${chatPath(id)}/messages?before=${state.rows[0].id}&limit=${PAGE}`);
      if (seq !== state.seq || id !== state.current) return;
      state.rows = older.messages.concat(state.rows);
      state.more = older.more;
      renderTranscript(true);
      setTimeout(fillScreen);
    } catch (err) {
      if (id === state.current) showError(err);
    } finally {
      state.loadingOlder = false;
    }
  }

  // While a turn runs: Send waits, Stop is offered, and the status line counts the saved steps.
  function setWorking(on) {
    if (!on) state.steps = [];
    state.running = on;
    nodes.send.disabled = on;
    nodes.stop.hidden = !on;
    nodes.stop.disabled = false;
    nodes.status.hidden = !on;
    const last = state.steps[state.steps.length - 1];
    nodes.status.textContent = last
      ? t("working_steps", { count: state.steps.length, label: stepLabel(last.turn_index, last.iteration) })
      : t("working");
  }

  // -- the chat's event stream -----------------------------------------------------------------
  function openStream(id) {
    const source = new EventSource(`${chatPath(id)}/events`);
    state.source = source;
    state.ready = new Promise((resolve) => source.addEventListener("open", resolve, { once: true }));
    // Each (re)connection reads the chat afresh (and whether a turn runs). A reconnection also gives
    // the server the last event's id (EventSource does it), so the events missed meanwhile follow.
    source.addEventListener("open", () => { if (state.source === source) refresh(true); });
    // A broken connection is an "error" event too, without data: EventSource reconnects by itself.
    const on = (type, handle) => source.addEventListener(type, (event) => {
      if (state.source === source && typeof event.data === "string") handle(JSON.parse(event.data));
    });
    on("message", (data) => {
      const follow = atEnd();
      const growing = stream.node;
      if (data.role !== "user") endLive(data);
      if (growing && !stream.node) growing.remove();
      const cut = data.role === "stopped" && stream.cut.has(data.turn_index);
      if (cut) nodes.messages.append(cutNode(data.turn_index));
      const node = messageNode(cut ? { ...data, tools: [] } : data);
      if (stream.node) nodes.messages.insertBefore(node, stream.node); // a person's message above a live answer
      else nodes.messages.append(node);
      if (stream.node) nodes.messages.append(stream.node);
      announce(node, data);
      nodes.empty.hidden = true;
      if (follow) scrollDown();
      if (data.role === "user") {
        setWorking(true);
        refresh(); // a read of the chat begun before this message must not draw the chat without it
      } else {
        state.ends += 1;
        setWorking(false);
        refresh();
        loadChats();
      }
    });
    // The answer as the model makes it, piece by piece; and each tool call as it starts and ends.
    on("delta", (data) => {
      liveTurn(data.turn_index).text += data.text;
      setWorking(true);
      drawLive();
    });
    on("tool", (data) => {
      const live = liveTurn(data.turn_index);
      // Words said before a tool call are not the answer: the answer is what comes after the turn's last call.
      if (data.state === "running" && !live.tools.has(data.call_id)) live.text = "";
      live.tools.set(data.call_id, data);
      setWorking(true);
      drawLive();
    });
    on("snapshot", (data) => {
      state.steps.push(data);
      setWorking(true);
    });
    on("approval", () => refresh());
    on("chat", () => loadChats()); // renamed, or named by its first message
    on("turn", (data) => {
      if (data.running) return;
      endLive({ role: "stopped", turn_index: data.turn_index });
      state.ends += 1;
      setWorking(false);
    });
    on("error", (data) => {
      setWorking(false);
      notice(nodes.notice, errorText(data));
      refresh();
    });
    on("reload", (data) => {
      if (data.reason === "deleted") {
        select(null, true);
        notice(nodes.notice, t("reloaded_deleted"), "info");
        loadChats();
        return;
      }
      // The stream was broken longer than the server keeps events: read afresh, as on any reconnection.
      if (data.reason === "missed") {
        refresh();
        return;
      }
      const reloaded = { restored: "reloaded_restored", undone: "reloaded_undone", forgotten: "forgot_chat" }[data.reason] || "reloaded";
      notice(nodes.notice, t(reloaded), "info");
      if (data.reason === "restored") {
        state.notes = []; // they spoke of steps that may be gone
        const thread = state.current;
        api("GET", `/api/replay/undo/${encodeURIComponent(thread)}`).then((offer) => {
          if (offer && thread === state.current) Kazma.offerUndo(nodes.notice, t("reloaded_restored"), thread);
        }, () => {});
      }
      refresh();
      loadChats();
    });
  }

  function closeStream() {
    if (state.source) state.source.close();
    state.source = null;
    state.ready = null;
  }

  async function select(id, push) {
    closeStream();
    state.current = id;
    state.rows = [];
    state.notes = [];
    state.more = false;
    Object.assign(stream, { live: null, node: null, cut: new Map(), tools: new Map() });
    if (push) history.pushState({ thread: id }, "", id ? `/?thread=${encodeURIComponent(id)}` : "/?new");
    if (id) localStorage.setItem(LAST_CHAT, id);
    notice(nodes.notice, "");
    nodes.approvals.replaceChildren();
    setWorking(false);
    renderTranscript();
    renderHead();
    if (!id) return;
    openStream(id);
    await refresh(true);
  }

  async function streamReady() {
    if (!state.ready) return;
    await Promise.race([state.ready, new Promise((resolve) => setTimeout(resolve, READY_WAIT_MS))]);
  }

  // -- slash commands: answered by the server's commands/, without the model ---------------------
  function answerContent(result) {
    const link = result.data && result.data.link;
    const at = link ? result.text.indexOf(link) : -1;
    if (at < 0) return [result.text];
    return [result.text.slice(0, at), el("a", { href: link, class: "replay-link" }, link), result.text.slice(at + link.length)];
  }

  async function runCommand(text) {
    const id = state.current;
    if (!id) {
      addNote(t("command_needs_chat"));
      return;
    }
    let result = await api("POST", `${chatPath(id)}/commands`, { text });
    if (result.kind === "confirm") {
      const sure = await confirmBox({
        title: t("confirm_title"), body: [el("p", { dir: "auto" }, isolated(result.text))], confirmLabel: t("confirm"), danger: true,
      });
      if (!sure) {
        addNote(t("nothing_done"));
        return;
      }
      result = await api("POST", `${chatPath(id)}/commands`, { text: result.data.confirm || text, confirmed: true });
    }
    // Help also lists the page's keyboard shortcuts.
    addNote(...answerContent(result), ...(/^\/help(?:\s|$)/.test(text) ? ["\n\n", t("keys_help")] : []));
  }

  // -- sending ---------------------------------------------------------------------------------
  async function send(text) {
    if (COMMAND.test(text)) {
      await runCommand(text);
      return;
    }
    if (!state.current) {
      const chat = await api("POST", "/api/chats"); // named by its first message, on the server
      Sidebar.add(chat);
      await select(chat.thread_id, true);
    }
    await streamReady();
    const ends = state.ends;
    scrollDown(); // what is sent, and its answer, are followed from the end of the chat
    await api("POST", `${chatPath(state.current)}/messages?wait=false`, { text });
    loadChats(); // a first message names its chat
    if (ends === state.ends) setWorking(true); // unless the turn was over before its answer came
  }

  async function stopTurn() {
    const id = state.current;
    if (!id) return;
    nodes.stop.disabled = true;
    nodes.status.textContent = t("stopping");
    try {
      await api("POST", `${chatPath(id)}/stop`);
      state.ends += 1; // the server answers once the turn has ended
      setWorking(false);
    } catch (err) {
      showError(err);
      nodes.stop.disabled = false;
    }
    await refresh();
  }

  nodes.form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = nodes.input.value.trim();
    if (!text) return;
    await opened; // what is typed while the page opens goes to the chat it opens, not a new one
    // Commands (/stop, /replay ...) are answered at once; a message waits for the running turn.
    if (state.running && !COMMAND.test(text)) {
      notice(nodes.notice, t("wait_or_stop"), "warn");
      return;
    }
    nodes.send.disabled = true;
    notice(nodes.notice, "");
    try {
      await send(text);
      nodes.input.value = "";
      nodes.input.dir = "";
    } catch (err) {
      showError(err);
    } finally {
      nodes.send.disabled = state.running;
      nodes.input.focus();
    }
  });

  nodes.stop.addEventListener("click", stopTurn);
  nodes.transcript.addEventListener("scroll", () => {
    if (nodes.transcript.scrollTop < OLDER_WHEN_PX) loadOlder();
  }, { passive: true });
  // The typed text takes its own direction; the empty box keeps the page's, for its placeholder.
  nodes.input.addEventListener("input", () => { nodes.input.dir = nodes.input.value ? "auto" : ""; });

  nodes.input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      nodes.form.requestSubmit();
    }
  });

  Sidebar.onPick((id) => select(id, true));
  Sidebar.onDeleted(() => select(null, true));
  Sidebar.onChanged(renderHead);
  const newChat = () => { Sidebar.closeDrawer(); select(null, true); nodes.input.focus(); };
  $("new-chat").addEventListener("click", newChat);
  window.addEventListener("popstate", () => select(new URLSearchParams(location.search).get("thread"), false));

  // Keyboard shortcuts (listed by /help): new chat, the message box, stop, search.
  document.addEventListener("keydown", (event) => {
    const mod = event.ctrlKey || event.metaKey;
    if (mod && event.shiftKey && event.key.toLowerCase() === "o") {
      event.preventDefault();
      newChat();
    } else if (mod && !event.shiftKey && event.key.toLowerCase() === "k") {
      event.preventDefault();
      Sidebar.focusSearch();
    } else if (event.key === "Escape" && event.shiftKey) {
      event.preventDefault();
      Sidebar.closeDrawer();
      nodes.input.focus();
    } else if (event.key === "Escape" && state.running && !document.querySelector("dialog[open]")) {
      event.preventDefault();
      stopTurn();
    }
  });

  // "/" opens the chat last opened here (else the newest); "/?new" is a new chat.
  opened = (async () => {
    await loadChats();
    const params = new URLSearchParams(location.search);
    let id = params.get("thread");
    if (!id && !params.has("new")) {
      const chats = Sidebar.chats();
      const last = localStorage.getItem(LAST_CHAT);
      const open = chats.find((c) => c.thread_id === last) || chats[0];
      if (open) {
        id = open.thread_id;
        history.replaceState({ thread: id }, "", `/?thread=${encodeURIComponent(id)}`);
      }
    }
    await select(id, false);
  })().catch(showError);
})();
