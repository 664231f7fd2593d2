// How a chat message's content is drawn: an answer's Markdown (HTML the server rendered and
// sanitised, kazma_ui/web/markdown.py), the tool blocks of its turn, and approval cards in
// people's words. chat.js places them in each message's layout.
"use strict";

const MessageView = (() => {
  const { t, tn, el, number, size, textDir, config } = Kazma;
  const FOLD = 600; // a result longer than this shows its start, with a button that shows the rest

  // The server's sanitised HTML, parsed inert (a <template> loads and runs nothing), then each code
  // block gets a copy button and each table scrolls sideways on its own on a narrow screen.
  function rich(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    const content = document.importNode(template.content, true);
    for (const pre of content.querySelectorAll("pre")) {
      const box = el("div", { class: "code-block" });
      pre.replaceWith(box);
      pre.setAttribute("dir", "ltr");
      const copy = el("button", { type: "button", class: "copy-code" }, t("copy_code"));
      copy.addEventListener("click", async () => {
        try {
          await navigator.clipboard.writeText(pre.textContent);
          copy.textContent = t("copied");
        } catch (err) {
          copy.textContent = t("copy_failed");
        }
        setTimeout(() => { copy.textContent = t("copy_code"); }, 2000);
      });
      box.append(copy, pre);
    }
    for (const table of content.querySelectorAll("table")) {
      const box = el("div", { class: "table-scroll" });
      table.replaceWith(box);
      box.append(table);
    }
    return content;
  }

  // -- tool blocks ---------------------------------------------------------------------------------
  // The tool in people's words: its catalogue sentence in the page's language, else the English label.
  function toolLabel(tool) {
    return tool.label_id && tool.label_id in config.strings ? t(tool.label_id) : tool.label || tool.name;
  }

  function valueText(value) {
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  function resultNode(tool, replayHref, expanded) {
    const text = String(tool.result ?? "");
    const full = Number(tool.result_chars ?? text.length);
    const pre = el("pre", { class: "tool-result", dir: textDir(text) });
    const cut = full > text.length
      ? el("p", { class: "muted tool-cut" }, t("tool_result_cut", { shown: number(text.length), count: number(full) }), " ",
        el("a", { href: replayHref }, t("chat_time_travel")))
      : null;
    if (text.length <= FOLD || expanded) {
      pre.textContent = text;
      return [pre, cut];
    }
    pre.textContent = `${text.slice(0, FOLD)}…`;
    const more = el("button", { type: "button", class: "show-all" }, t("tool_states.more", { count: number(text.length) }));
    more.addEventListener("click", () => {
      pre.textContent = text;
      pre.closest("details").dataset.expanded = "true"; // stays shown as the turn's blocks are drawn again
      more.remove();
    });
    return [pre, more, cut];
  }

  const OUTCOME = { running: "tool_states.running", done: "tool_states.done", failed: "tool_states.failed" };

  // One tool call as a <details>: closed, the tool and how it went; open, what it was asked and what it answered.
  function toolBlock(tool, { open = false, expanded = false, replayHref = "/replay" } = {}) {
    const state = tool.state || "done";
    const block = el("details", { class: `tool-block ${state}`, "data-call": tool.call_id, "data-state": state, open },
      el("summary", {},
        el("span", { class: "tool-label", dir: "auto" }, toolLabel(tool)), " ",
        el("span", { class: "tool-outcome" }, t(OUTCOME[state] || "tool_states.done"))));
    const args = Object.entries(tool.args || {});
    if (args.length) {
      block.append(el("h4", {}, t("tool_arguments")), el("dl", { class: "tool-args" }, args.map(([name, value]) =>
        el("div", {}, el("dt", { dir: "ltr" }, name), el("dd", { dir: "auto" }, valueText(value))))));
    }
    if (state !== "running") block.append(el("h4", {}, t("tool_result")), ...resultNode(tool, replayHref, expanded).filter(Boolean));
    if (expanded) block.dataset.expanded = "true";
    return block;
  }

  // Draws a message's tool blocks into its .msg-tools, keeping open (and shown whole) what the person opened.
  function fillTools(box, tools, replayHref) {
    const ids = (selector) => new Set([...box.querySelectorAll(selector)].map((d) => d.dataset.call));
    const opened = ids("details[open]");
    const expanded = ids("details[data-expanded]");
    // What the model said before asking for a tool comes above its block (plain text, as said).
    box.replaceChildren(...(tools || []).flatMap((tool) => [
      tool.said ? el("p", { class: "tool-said", dir: "auto" }, tool.said) : null,
      toolBlock(tool, { open: opened.has(tool.call_id), expanded: expanded.has(tool.call_id), replayHref }),
    ].filter(Boolean)));
  }

  // -- approval cards ---------------------------------------------------------------------------------
  // What the card asks, in people's words: for a file, what will be written where, and the text itself.
  function approvalWords(card) {
    const args = card.args || {};
    if (card.tool === "write_file" && typeof args.path === "string") {
      const text = String(args.text ?? "");
      const where = el("bdi", { dir: "ltr", class: "path" }, args.path);
      const bytes = new TextEncoder().encode(text).length;
      return {
        title: t("approval_write_title"),
        body: [
          el("p", { class: "approval-what" }, text
            ? tn("approval_write_where", { size: size(bytes), path: where })
            : tn("approval_write_empty", { path: where })),
          text ? el("pre", { class: "args approval-text", dir: textDir(text) }, text) : null,
        ],
      };
    }
    return {
      title: t("approval_title", { tool: card.tool }),
      body: [el("dl", { class: "tool-args args" }, Object.entries(args).map(([name, value]) =>
        el("div", {}, el("dt", { dir: "ltr" }, name), el("dd", { dir: "auto" }, valueText(value)))))],
    };
  }

  return { rich, toolBlock, fillTools, approvalWords };
})();
