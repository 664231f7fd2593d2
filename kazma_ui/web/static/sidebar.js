// The web chat's sidebar: the person's chats (forks with their lineage, where a chat lives in a chat
// app), the chosen one marked. chat.js owns the conversation; it tells the sidebar which chat is open
// and hears from it which one the person picked.
"use strict";

const Sidebar = (() => {
  const { t, api, el, errorText, notice } = Kazma;
  const $ = (id) => document.getElementById(id);
  const nodes = { list: $("chat-list"), noChats: $("no-chats"), notice: $("notice") };
  const state = { chats: [], current: null, onPick: () => {} };

  function lineage(chat) {
    const from = chat.forked_from;
    if (!from) return null;
    const source = state.chats.find((c) => c.thread_id === from.thread_id);
    const title = source ? source.title : t("deleted_chat");
    if (from.turn_index === null || from.turn_index === undefined) return t("forked_from_short", { title });
    return t("forked_from", { title, turn: from.turn_index, step: from.iteration });
  }

  // Where the chat lives in a chat app: a fork opened in a Telegram topic, a Discord or Slack thread.
  const PLATFORMS = { telegram: "Telegram", discord: "Discord", slack: "Slack" };
  function livesIn(chat) {
    const at = chat.lives_in;
    if (!at) return null;
    return t(`lives_in_${at.place}`, { platform: PLATFORMS[at.platform] || at.platform, name: at.name });
  }

  function render() {
    nodes.noChats.hidden = state.chats.length > 0;
    nodes.list.replaceChildren(...state.chats.map((chat) => {
      const link = el("a", {
        href: `/?thread=${encodeURIComponent(chat.thread_id)}`, class: "chat-link", "data-thread": chat.thread_id,
        "aria-current": chat.thread_id === state.current ? "page" : null,
      }, el("span", { class: "chat-title" }, chat.title));
      const from = lineage(chat);
      if (from) link.append(el("span", { class: "lineage" }, from));
      const place = livesIn(chat);
      if (place) link.append(el("span", { class: "lives-in", "data-platform": chat.lives_in.platform }, place));
      link.addEventListener("click", (event) => { event.preventDefault(); state.onPick(chat.thread_id); });
      return el("li", {}, link);
    }));
  }

  async function load() {
    try {
      state.chats = (await api("GET", "/api/chats")).chats;
    } catch (err) {
      notice(nodes.notice, errorText(err));
    }
    render();
  }

  return {
    load,
    render,
    find: (id) => state.chats.find((c) => c.thread_id === id),
    add: (chat) => { state.chats.unshift(chat); },
    setCurrent: (id) => { state.current = id; render(); },
    onPick: (handle) => { state.onPick = handle; },
  };
})();
