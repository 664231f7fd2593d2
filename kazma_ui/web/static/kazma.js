// What every page shares: its words, calls to the JSON API (with the CSRF header),
// refusals shown as sentences, a confirmation dialog, and the language switch.
"use strict";

const Kazma = (() => {
  const config = JSON.parse(document.getElementById("kazma-config").textContent);
  const numbers = config.lang === "ar" ? "ar-u-nu-latn" : "en";

  function t(key, values = {}) {
    return filled(config.strings[key] ?? key, values);
  }

  function filled(template, values) {
    let text = template;
    for (const [name, value] of Object.entries(values)) text = text.replaceAll(`{${name}}`, String(value));
    return text;
  }

  // A sentence that counts: `key_one`, `key_two`, `key_few`... (the language's plural forms) when the
  // catalogue has that form, else `key`.
  const plurals = new Intl.PluralRules(config.lang);
  function tc(key, count, values = {}) {
    const form = `${key}_${plurals.select(Number(count))}`;
    return t(form in config.strings ? form : key, { ...values, count: number(count) });
  }

  // The same sentence as nodes, each value isolated (<bdi>) so that an id, a size or code
  // keeps its own direction inside an Arabic sentence.
  function tn(key, values = {}) {
    const template = config.strings[key] ?? key;
    const parts = [];
    let last = 0;
    for (const match of template.matchAll(/\{(\w+)\}/g)) {
      parts.push(template.slice(last, match.index));
      const value = values[match[1]];
      parts.push(value instanceof Node ? value : el("bdi", {}, value === undefined ? match[0] : String(value)));
      last = match.index + match[0].length;
    }
    parts.push(template.slice(last));
    return parts;
  }

  function cookie(name) {
    const found = document.cookie.split("; ").find((part) => part.startsWith(name + "="));
    return found ? decodeURIComponent(found.slice(name.length + 1)) : "";
  }

  class ApiError extends Error {
    constructor(status, body) {
      super(body.message || body.error);
      this.status = status;
      this.code = body.error;
      this.body = body;
    }
  }

  async function api(method, path, body) {
    // The page's language (it may differ from the stored choice: ?lang=), for answers worded by the server.
    const headers = { Accept: "application/json", "X-Kazma-Lang": config.lang };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (method !== "GET") headers["X-Kazma-CSRF"] = cookie("kazma_csrf");
    let response;
    try {
      response = await fetch(path, {
        method, headers, credentials: "same-origin",
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new ApiError(0, { error: "network", message: t("error_network") });
    }
    if (response.status === 204) return null;
    let data = null;
    try { data = await response.json(); } catch (err) { data = null; }
    if (!response.ok) throw new ApiError(response.status, data && data.error ? data : { error: "network", message: t("error_network") });
    return data;
  }

  // A refusal as a sentence: the server's own in English (its catalogue sentence, filled); in Arabic
  // the catalogue's sentence it names, filled from its parameters (a list one as `config.lists` says).
  function errorText(err) {
    const body = err instanceof ApiError ? err.body : err && err.error ? err : { error: "network", message: t("error_network") };
    const named = body.message_id && `errors.${body.message_id}`;
    if (config.lang === "en") return body.message;
    if (!(named && named in config.strings)) {
      return body.error === "invalid_setting" ? t("error_invalid_setting", { reason: body.message }) : body.message;
    }
    const values = {};
    for (const [name, value] of Object.entries(body)) {
      const listed = config.lists[name];
      values[name] = listed && Array.isArray(value)
        ? value.map((item) => filled(listed[0], item !== null && typeof item === "object" ? item : { value: item })).join(listed[1])
        : value;
    }
    return t(named, values);
  }
  // Builds DOM from text only (never HTML), so nothing a chat says can run in the page.
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === false || value === null || value === undefined) continue;
      if (name === "onclick") node.addEventListener("click", value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat()) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // Replaces a node's children, skipping the empty ones (a part that does not apply is null).
  function fill(node, ...children) {
    node.replaceChildren(...children.flat().filter((child) => child !== null && child !== undefined && child !== false));
    return node;
  }

  function notice(node, message, kind = "error") {
    if (!message) { node.hidden = true; node.textContent = ""; return; }
    node.className = `notice ${kind}`;
    node.textContent = message;
    node.hidden = false;
  }

  // A text's direction: its first letter's (dir="auto"), or left to right when it has no letter at
  // all ("7*2 = 14"), which the page's right-to-left direction would otherwise turn around.
  function textDir(text) {
    return /[A-Za-z\u00C0-\u024F\u0590-\u08FF\uFB1D-\uFEFC]/.test(String(text)) ? "auto" : "ltr";
  }

  function stepLabel(turn, step) { return t("step_label", { turn, step }); }
  function shortId(id) { return String(id).slice(0, 8); }
  function number(value) { return Number(value).toLocaleString(numbers); }
  function time(seconds) {
    return new Date(seconds * 1000).toLocaleString(numbers, { dateStyle: "medium", timeStyle: "medium" });
  }
  // A size in the person's words (B, KB, MB, GB: powers of 1024, one decimal below 10), as the server's
  // kazma_core.sizes.human_size says it.
  const UNITS = ["size_b", "size_kb", "size_mb", "size_gb"];
  function size(bytes) {
    let value = Number(bytes);
    let unit = 0;
    while (value >= 1024 && unit < UNITS.length - 1) {
      value /= 1024;
      unit += 1;
    }
    const shown = unit === 0 || value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
    return t(UNITS[unit], { n: number(shown) });
  }

  // Resolves true when the person confirms; the buttons carry the catalogue's words.
  function confirmBox({ title, body = [], confirmLabel = t("confirm"), danger = false }) {
    const dialog = document.getElementById("confirm-dialog");
    document.getElementById("confirm-title").textContent = title;
    document.getElementById("confirm-body").replaceChildren(...body);
    const ok = document.getElementById("confirm-ok");
    ok.textContent = confirmLabel;
    ok.className = danger ? "danger" : "primary";
    dialog.returnValue = "";
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok"), { once: true });
      dialog.showModal();
      ok.focus();
    });
  }

  function setupLanguageSwitch() {
    for (const link of document.querySelectorAll("[data-set-lang]")) {
      link.addEventListener("click", async (event) => {
        event.preventDefault();
        const lang = link.dataset.setLang;
        const url = new URL(location.href);
        if (config.user) {
          try {
            await api("PUT", "/api/me/lang", { lang });
            url.searchParams.delete("lang");
          } catch (err) {
            url.searchParams.set("lang", lang);
          }
        } else {
          url.searchParams.set("lang", lang);
        }
        location.assign(url.toString());
      });
    }
  }

  // An alert in the page's language: its catalogue sentence (by message_id), else the English it was kept in.
  function alertText(alert) {
    const named = alert.message_id && `errors.${alert.message_id}`;
    return config.lang === "en" || !(named && named in config.strings) ? alert.message : t(named, alert.params || {});
  }

  // The owner sees every operator alert (a clean-up whose deletion did not take) until acknowledged.
  async function showAlerts() {
    const box = document.getElementById("alerts");
    if (!box || !config.user || config.user.role !== "owner") return;
    let found;
    try { found = (await api("GET", "/api/alerts")).alerts; } catch (err) { return; }
    fill(box, found.map((alert) => el("div", { class: "notice error alert", "data-alert": alert.id },
      el("strong", {}, t("alerts_title")), " · ", el("bdi", {}, time(alert.created_at)), " · ",
      el("span", {}, alertText(alert)), " ",
      el("button", { type: "button", onclick: async () => {
        try { await api("POST", `/api/alerts/${alert.id}/ack`); } catch (err) { return; }
        showAlerts();
      } }, t("alert_ack")))));
    box.hidden = found.length === 0;
  }

  // Signing out ends the session on the server (its token stops working at once), then shows the sign-in page.
  function setupSignOut() {
    const button = document.querySelector("[data-sign-out]");
    if (!button) return;
    button.addEventListener("click", async () => {
      try {
        await fetch("/logout", { method: "POST", credentials: "same-origin", headers: { "X-Kazma-CSRF": cookie("kazma_csrf") } });
      } finally {
        location.assign("/");
      }
    });
  }

  // "Restored · Undo": a restore's confirmation offers to undo it while the server says it can.
  function offerUndo(node, message, thread, after) {
    notice(node, message, "ok");
    const button = el("button", { type: "button", class: "undo-button" }, t("undo"));
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        await api("POST", "/api/replay/undo", { thread_id: thread });
        notice(node, t("undone"), "ok");
        if (after) await after();
      } catch (err) {
        notice(node, errorText(err));
      }
    });
    node.append(" · ", button);
  }

  // Light, dark, or as the browser asks (prefers-color-scheme, in kazma.css): kept in this browser.
  const THEME = "kazma.theme";
  function setupThemeSwitch() {
    const apply = (theme) => {
      if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
      else delete document.documentElement.dataset.theme;
    };
    const chosen = localStorage.getItem(THEME) || "auto";
    apply(chosen);
    const box = document.querySelector("[data-theme-switch]");
    if (!box) return;
    box.value = chosen;
    box.addEventListener("change", () => {
      localStorage.setItem(THEME, box.value);
      apply(box.value);
    });
  }

  setupThemeSwitch();
  setupLanguageSwitch();
  setupSignOut();
  showAlerts();
  return { config, t, tc, tn, textDir, api, ApiError, errorText, el, fill, notice, offerUndo, stepLabel, shortId, number, time, size, confirmBox };
})();
