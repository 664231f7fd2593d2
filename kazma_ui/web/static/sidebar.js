// The web chat's sidebar: the person's chats (forks with their lineage, where a chat lives in a chat
// app), the chosen one marked; a search over titles and messages; rename and delete of a chat. On a
// phone it is a drawer over the chat. chat.js owns the conversation; it tells the sidebar which chat
// is open and hears from it which one the person picked (or that the open one was deleted).
"use strict";

const Sidebar = (() => {
  const { t, tn, api, el, errorText, notice, confirmBox } = Kazma;
  const $ = (id) => document.getElementById(id);
  const nodes = {
    list: $("chat-list"), noChats: $("no-chats"), notice: $("notice"), search: $("chat-search"),
    noMatch: $("no-match"), drawer: $("chats-toggle"), sidebar: $("sidebar"), shade: $("sidebar-shade"),
  };
  const state = { chats: [], found: null, query: "", current: null, onPick: () => {}, onDeleted: () => {}, onChanged: () => {}, asked: 0 };
  const SEARCH_WAIT_MS = 200;
  const UNTITLED = "New chat"; // the server's placeholder until a first message names the chat

  const shownTitle = (chat) => (chat.title === UNTITLED ? t("new_chat") : chat.title);

  function lineage(chat) {
    const from = chat.forked_from;
    if (!from) return null;
    const source = state.chats.find((c) => c.thread_id === from.thread_id);
    const title = source ? shownTitle(source) : t("deleted_chat");
    if (from.turn_index === null || from.turn_index === undefined) return tn("forked_from_short", { title });
    return tn("forked_from", { title, turn: from.turn_index, step: from.iteration });
  }

  // Where the chat lives in a chat app: a fork opened in a Telegram topic, a Discord or Slack thread.
  const PLATFORMS = { telegram: "Telegram", discord: "Discord", slack: "Slack" };
  function livesIn(chat) {
    const at = chat.lives_in;
    if (!at) return null;
    return tn(`lives_in_${at.place}`, { platform: PLATFORMS[at.platform] || at.platform, name: at.name });
  }

  function item(chat) {
    const title = shownTitle(chat);
    // Each title takes its own direction, isolated: "hello, what can you do?" keeps its "?" at its end in Arabic.
    const link = el("a", {
      href: `/?thread=${encodeURIComponent(chat.thread_id)}`, class: "chat-link", "data-thread": chat.thread_id,
      "aria-current": chat.thread_id === state.current ? "page" : null,
    }, el("span", { class: "chat-title", dir: "auto", title }, title));
    const from = lineage(chat);
    if (from) link.append(el("span", { class: "lineage", dir: "auto" }, from));
    const place = livesIn(chat);
    if (place) link.append(el("span", { class: "lives-in", "data-platform": chat.lives_in.platform }, place));
    if (chat.found) link.append(el("span", { class: "found", dir: "auto" }, chat.found));
    link.addEventListener("click", (event) => { event.preventDefault(); pick(chat.thread_id); });
    const rename = el("button", { type: "button", class: "chat-action", "data-action": "rename", "aria-label": t("rename_chat_named", { title }), title: t("rename_chat") }, "✎");
    const remove = el("button", { type: "button", class: "chat-action", "data-action": "delete", "aria-label": t("delete_chat_named", { title }), title: t("delete_chat") }, "×");
    rename.addEventListener("click", () => startRename(chat, row));
    remove.addEventListener("click", () => askDelete(chat));
    const row = el("li", { class: "chat-item", "data-thread": chat.thread_id }, link, el("span", { class: "chat-actions" }, rename, remove));
    return row;
  }

  function render() {
    const shown = state.found || state.chats;
    nodes.noChats.hidden = state.chats.length > 0 || state.found !== null;
    nodes.noMatch.hidden = !(state.found && state.found.length === 0);
    nodes.list.replaceChildren(...shown.map(item));
  }

  async function load() {
    try {
      state.chats = (await api("GET", "/api/chats")).chats;
    } catch (err) {
      notice(nodes.notice, errorText(err));
    }
    if (state.query) await search(state.query);
    else render();
  }

  // -- search over titles and what was said ---------------------------------------------------
  async function search(query) {
    state.query = query.trim();
    const asked = ++state.asked;
    if (!state.query) {
      state.found = null;
      render();
      return;
    }
    try {
      const found = (await api("GET", `/api/chats?q=${encodeURIComponent(state.query)}`)).chats;
      if (asked !== state.asked) return; // a later search's answer wins
      state.found = found;
    } catch (err) {
      notice(nodes.notice, errorText(err));
    }
    render();
  }

  let searchTimer = null;
  nodes.search.addEventListener("input", () => {
    nodes.search.dir = nodes.search.value ? "auto" : "";
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => search(nodes.search.value), SEARCH_WAIT_MS);
  });
  nodes.search.addEventListener("keydown", (event) => {
    if (event.key === "Escape") {
      nodes.search.value = "";
      search("");
    } else if (event.key === "Enter") {
      event.preventDefault();
      const first = (state.found || state.chats)[0];
      if (first) pick(first.thread_id);
    }
  });

  // -- rename, in place -------------------------------------------------------------------------
  function startRename(chat, row) {
    const input = el("input", { type: "text", class: "rename-input", value: chat.title === UNTITLED ? "" : chat.title, maxlength: 200, dir: "auto", "aria-label": t("rename_chat") });
    let done = false;
    const finish = async (save) => {
      if (done) return;
      done = true;
      const title = input.value.trim();
      if (save && title && title !== chat.title) {
        try {
          const renamed = await api("PATCH", `/api/chats/${encodeURIComponent(chat.thread_id)}`, { title });
          chat.title = renamed.title;
        } catch (err) {
          notice(nodes.notice, errorText(err));
        }
      }
      await load();
      state.onChanged();
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); finish(true); }
      if (event.key === "Escape") { event.preventDefault(); finish(false); }
    });
    input.addEventListener("blur", () => finish(true));
    row.replaceChildren(input);
    input.focus();
    input.select();
  }

  // -- delete: the chat with all of it, or only what Kazma learned in it --------------------------
  async function askDelete(chat) {
    const choice = (value, label, checked) => el("label", { class: "choice" },
      el("input", { type: "radio", name: "delete-what", value, checked }), " ", label);
    const all = choice("chat", t("delete_choice_chat"), true);
    const learned = choice("learned", t("delete_choice_learned"), false);
    const sure = await confirmBox({
      title: t("delete_title", { title: shownTitle(chat) }),
      body: [el("p", {}, t("delete_body")), el("div", { class: "choices" }, all, learned)],
      confirmLabel: t("delete_confirm"), danger: true,
    });
    if (!sure) return;
    const path = `/api/chats/${encodeURIComponent(chat.thread_id)}`;
    try {
      if (learned.querySelector("input").checked) {
        await api("POST", `${path}/forget`);
        notice(nodes.notice, t("forgot_chat"), "ok");
        return;
      }
      await api("DELETE", path);
    } catch (err) {
      notice(nodes.notice, errorText(err));
      return;
    }
    await load();
    if (chat.thread_id === state.current) state.onDeleted();
    notice(nodes.notice, t("deleted_chat_done", { title: shownTitle(chat) }), "ok");
  }

  // -- the drawer on a phone ----------------------------------------------------------------------
  function setDrawer(open) {
    document.body.classList.toggle("drawer-open", open);
    nodes.drawer.setAttribute("aria-expanded", String(open));
  }
  nodes.drawer.addEventListener("click", () => setDrawer(!document.body.classList.contains("drawer-open")));
  nodes.shade.addEventListener("click", () => setDrawer(false));

  function pick(id) {
    setDrawer(false);
    state.onPick(id);
  }

  return {
    load,
    render,
    chats: () => state.chats,
    find: (id) => state.chats.find((c) => c.thread_id === id),
    title: (id) => { const chat = state.chats.find((c) => c.thread_id === id); return chat ? shownTitle(chat) : t("new_chat"); },
    add: (chat) => { state.chats.unshift(chat); },
    setCurrent: (id) => { state.current = id; render(); },
    onPick: (handle) => { state.onPick = handle; },
    onDeleted: (handle) => { state.onDeleted = handle; },
    onChanged: (handle) => { state.onChanged = handle; },
    focusSearch: () => { setDrawer(true); nodes.search.focus(); nodes.search.select(); },
    closeDrawer: () => setDrawer(false),
  };
})();
