// The Settings page: each time-travel setting with its running and stored value; saving
// validates on the server, a live one applies at once, the others say a restart is needed.
"use strict";

(() => {
  const { t, api, el, errorText, notice, number, size } = Kazma;
  const rows = document.getElementById("settings-rows");
  const pageNotice = document.getElementById("notice");

  // A size setting reads in KB, MB or GB; its box still takes bytes.
  const inBytes = (setting) => setting.name.endsWith("_bytes");
  const amount = (setting, value) => (inBytes(setting) ? size(value) : number(value));
  const shown = (setting, value) => {
    if (value === null || value === undefined) return t("setting_none");
    if (setting.kind === "bool") return t(value ? "true" : "false");
    return typeof value === "number" ? amount(setting, value) : String(value);
  };

  // A refused value is explained with what the page knows of the setting, in the page's language.
  function refusal(setting, err) {
    if (err.code !== "invalid_setting") return errorText(err);
    if (setting.kind === "bool") return t("setting_refused_switch");
    if (setting.minimum !== null && setting.maximum !== null) {
      return t("setting_refused_range", { min: amount(setting, setting.minimum), max: amount(setting, setting.maximum) });
    }
    return t("setting_refused");
  }

  function row(setting) {
    const current = setting.stored ?? setting.value; // what the next start will use
    const input = setting.kind === "bool"
      ? el("input", { type: "checkbox", checked: current === true, "aria-label": setting.name })
      : el("input", {
        type: "number", step: "1", value: current, min: setting.minimum, max: setting.maximum,
        "aria-label": setting.name, dir: "ltr",
      });
    const save = el("button", { type: "submit", class: "primary" }, t("save"));
    const message = el("p", { class: "row-message", "aria-live": "polite" });
    const badges = el("span", { class: "badges" },
      el("span", { class: "badge" }, t(setting.live ? "setting_live" : "setting_at_start")),
      setting.restart_needed ? el("span", { class: "badge warn restart" }, t("restart_needed")) : null);
    const form = el("form", { class: "setting-form", novalidate: true }, input, save); // the server says why a value is refused
    const node = el("tr", { "data-setting": setting.name },
      el("th", { scope: "row" },
        el("code", { dir: "ltr" }, setting.name),
        el("span", { class: "description" }, t(`setting_${setting.name}`)),
        setting.minimum !== null && setting.maximum !== null
          ? el("span", { class: "muted range" }, t("range", { min: amount(setting, setting.minimum), max: amount(setting, setting.maximum) }))
          : null,
        badges),
      el("td", { class: "running" }, shown(setting, setting.value)),
      el("td", { class: "stored" }, shown(setting, setting.stored)),
      el("td", {}, form, message));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      notice(pageNotice, "");
      const value = setting.kind === "bool" ? input.checked : input.value.trim();
      const parsed = setting.kind === "bool" || !/^-?\d+$/.test(value) ? value : Number(value);
      save.disabled = true;
      try {
        const saved = await api("PUT", `/api/settings/${encodeURIComponent(setting.name)}`, { value: parsed });
        const fresh = row(saved);
        node.replaceWith(fresh);
        const done = fresh.querySelector(".row-message");
        done.className = "row-message ok";
        done.textContent = t(saved.restart_needed ? "saved_restart" : "saved_live", { name: saved.name });
      } catch (err) {
        message.className = "row-message error";
        message.textContent = refusal(setting, err);
        save.disabled = false;
      }
    });
    return node;
  }

  // The model Kazma talks to (chosen at start, in config; its key is never shown).
  function showModel(model) {
    document.getElementById("model-provider").textContent = t(`model_provider_${model.provider}`);
    // A name or an address keeps its own direction inside an Arabic page.
    document.getElementById("model-name").replaceChildren(el("bdi", { dir: "ltr" }, model.name));
    document.getElementById("model-base-url").replaceChildren(model.base_url ? el("bdi", { dir: "ltr" }, model.base_url) : t("setting_none"));
    document.getElementById("model-prompt").textContent = model.system_prompt;
    document.getElementById("model-info").hidden = false;
  }

  (async () => {
    try {
      const { settings, model } = await api("GET", "/api/settings");
      rows.replaceChildren(...settings.map(row));
      if (model) showModel(model);
    } catch (err) {
      notice(pageNotice, errorText(err));
    }
  })();
})();
