// Comparing two saved steps on the Time Travel page: the two side by side, message by message,
// in the words every surface uses (the server's kazma_ui/step_views.py), never code syntax.
"use strict";

const KazmaCompare = (() => {
  const { t, el, fill, number, stepLabel } = Kazma;
  const labelOf = (info) => stepLabel(info.turn_index, info.iteration);
  const clip = (text, limit) => (text.length <= limit ? text : text.slice(0, limit - 1) + "…");

  // Values as words (the server's step_views.value_text): never JSON or Python syntax.
  function valueText(value) {
    if (value === null || value === undefined || value === "" || (Array.isArray(value) && !value.length)
      || (typeof value === "object" && !Object.keys(value).length)) return t("value_none");
    if (typeof value === "boolean") return t(value ? "value_yes" : "value_no");
    if (Array.isArray(value)) return value.map(valueText).join(", ");
    if (typeof value === "object") return Object.entries(value).map(([k, v]) => `${k}: ${valueText(v)}`).join(", ");
    return String(value);
  }

  // A long message shows its start, with a button that opens it whole (and folds it again).
  const FOLD_AT = 400;
  function said(text) {
    const node = el("span", { class: "said", dir: Kazma.textDir(text) }, clip(text, FOLD_AT));
    if (text.length <= FOLD_AT) return node;
    const toggle = el("button", { type: "button", class: "show-all", "aria-expanded": "false" }, t("show_all", { count: number(text.length) }));
    toggle.addEventListener("click", () => {
      const open = toggle.getAttribute("aria-expanded") !== "true";
      node.textContent = open ? text : clip(text, FOLD_AT);
      toggle.setAttribute("aria-expanded", String(open));
      toggle.textContent = open ? t("show_less") : t("show_all", { count: number(text.length) });
    });
    return [node, toggle];
  }

  function sideCell(view, kind) {
    if (!view) return el("td", { class: "empty" }, "—");
    return el("td", { class: kind },
      el("span", { class: "role" }, t(`role_${view.role}`)),
      said(view.said || ""));
  }

  // A cost's change in words: "Tokens read: +12,735", never the field's name.
  function costText([name, change]) {
    const key = `cost_${name}`;
    const what = key in Kazma.config.strings ? t(key) : name.replaceAll("_", " "); // a cost the catalogue does not name yet
    return `${what}: ${change > 0 ? "+" : ""}${number(change)}`;
  }

  // The two steps side by side, message by message; runs of equal messages are folded into one line.
  function render(result, into) {
    const m = result.messages;
    const rows = [
      ...m.changed.map((item) => ({ position: item.position, a: item.a, b: item.b, kind: "changed" })),
      ...m.removed.map((item) => ({ position: item.position, a: item, b: null, kind: "removed" })),
      ...m.added.map((item) => ({ position: item.position, a: null, b: item, kind: "added" })),
    ].sort((x, y) => x.position - y.position);
    const body = [];
    let next = 0;
    // Positions are counted from 1 for people (the API's from 0).
    const same = (from, to) => el("tr", { class: "same" }, el("td", { colspan: 3, class: "muted" },
      t(from === to ? "compare_same_one" : "compare_same_many", { from: number(from + 1), to: number(to + 1) })));
    for (const row of rows) {
      if (row.position > next) body.push(same(next, row.position - 1));
      body.push(el("tr", { class: `diff-row ${row.kind}`, "data-kind": row.kind },
        el("th", { scope: "row", class: "position" }, number(row.position + 1)), sideCell(row.a, row.kind), sideCell(row.b, row.kind)));
      next = row.position + 1;
    }
    const shared = Math.min(result.a.message_count ?? next, result.b.message_count ?? next);
    if (shared > next) body.push(same(next, shared - 1));
    const field = (key, a, b) => el("tr", {}, el("th", { scope: "row" }, t(key)),
      el("td", { dir: "auto" }, valueText(a)), el("td", { dir: "auto" }, valueText(a) === valueText(b) ? t("compare_same") : valueText(b)));
    const costs = Object.entries(result.cost).filter(([, v]) => v).map(costText).join(" · ");
    fill(into,
      el("p", { class: "counts" }, t("compare_counts", { added: number(m.added.length), removed: number(m.removed.length), changed: number(m.changed.length) })),
      el("table", { class: "side-by-side" },
        el("colgroup", {}, el("col", { class: "position-col" }), el("col"), el("col")),
        el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "#"),
          el("th", { scope: "col" }, t("compare_a"), " · ", el("bdi", {}, labelOf(result.a))),
          el("th", { scope: "col" }, t("compare_b"), " · ", el("bdi", {}, labelOf(result.b))))),
        el("tbody", {}, body.length ? body : [el("tr", {}, el("td", { colspan: 3, class: "muted" }, t("compare_identical")))])),
      el("h4", {}, t("compare_fields")),
      el("table", { class: "fields" },
        el("thead", {}, el("tr", {}, el("th", {}), el("th", {}, el("bdi", {}, labelOf(result.a))), el("th", {}, el("bdi", {}, labelOf(result.b))))),
        el("tbody", {}, field("compare_plan", result.plan.a, result.plan.b), field("compare_model", result.model.a, result.model.b),
          el("tr", {}, el("th", { scope: "row" }, t("compare_cost")), el("td", { colspan: 2, dir: "auto" }, costs || t("compare_same"))))),
    );
  }

  return { render, valueText };
})();
