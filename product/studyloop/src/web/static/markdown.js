// The mentor's Markdown in the conversation view, rendered safely.
//
// Agent output is untrusted: it must never put HTML, script, styles or remote
// requests into the page. Three maintained, vendored libraries (pinned in
// vendor/VENDOR.md) do the work, each behind the next:
//   1. marked (GFM) parses the Markdown; raw HTML blocks and inline HTML are
//      re-emitted as escaped text and images as their alt text, so a reply's
//      `<script>` is shown, not run, and nothing is fetched;
//   2. DOMPurify sanitizes the result to an allow-list of text-formatting
//      tags, links limited to http(s)/mailto (opened with noopener/noreferrer),
//      and `class` only as a code block's `language-*`;
//   3. highlight.js colours fenced code from the block's *text*, so markup in
//      code can only ever be text.
// The page's CSP (`default-src 'self'`, no inline script or style) stays the
// last line. Without the libraries (a broken asset) replies fall back to text.
"use strict";

const MD_TAGS = ["p", "br", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li",
  "blockquote", "pre", "code", "em", "strong", "del", "a", "table", "thead", "tbody",
  "tr", "th", "td"];
const MD_ATTRS = ["href", "title", "class", "start", "align"];
const MD_LINK = /^(?:https?:|mailto:)/i;
const MD_LANGUAGE_CLASS = /^language-[A-Za-z0-9_+#-]{1,32}$/;

function mdEscape(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
  })[c]);
}

const mdReady = typeof window.marked === "object" && typeof window.DOMPurify === "function" &&
  window.DOMPurify.isSupported;

const mdParser = mdReady ? new window.marked.Marked({ gfm: true, breaks: false, async: false }) : null;
if (mdParser) {
  mdParser.use({
    renderer: {
      html(token) { return mdEscape(token.text); },
      image(token) { return mdEscape(token.text ? `[image: ${token.text}]` : "[image]"); },
    },
  });
  window.DOMPurify.addHook("uponSanitizeAttribute", (node, data) => {
    if (data.attrName === "class") {
      data.keepAttr = node.nodeName === "CODE" && MD_LANGUAGE_CLASS.test(data.attrValue);
    } else if (data.attrName === "href") {
      data.keepAttr = MD_LINK.test(data.attrValue.trim());
    }
  });
  window.DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName === "A") {
      node.setAttribute("rel", "noopener noreferrer nofollow");
      node.setAttribute("target", "_blank");
    }
  });
}
if (typeof window.hljs === "object") {
  window.hljs.configure({ ignoreUnescapedHTML: true, throwUnescapedHTML: false });
}

// Replaces `el`'s children with `source` rendered as sanitized Markdown;
// keeps the source on the element for anyone reading the transcript.
function renderMarkdown(el, source) {
  el.dataset.markdown = source;
  if (!mdParser) {
    el.textContent = source;
    return;
  }
  const html = mdParser.parse(source);
  const fragment = window.DOMPurify.sanitize(html, {
    ALLOWED_TAGS: MD_TAGS,
    ALLOWED_ATTR: MD_ATTRS,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  // A link whose target was refused (javascript:, data:, …) becomes its text.
  fragment.querySelectorAll("a:not([href])").forEach((a) => a.replaceWith(...a.childNodes));
  // marked ends each block with a newline: none before the first or after the last.
  for (const end of ["firstChild", "lastChild"]) {
    while (fragment[end] && fragment[end].nodeType === Node.TEXT_NODE && !fragment[end].data.trim()) {
      fragment[end].remove();
    }
  }
  el.replaceChildren(fragment);
  el.dataset.format = "markdown";
  if (typeof window.hljs === "object") {
    el.querySelectorAll("pre code").forEach((code) => {
      const lang = (code.className.match(/language-([A-Za-z0-9_+#-]+)/) || [])[1];
      if (lang && !window.hljs.getLanguage(lang)) return;
      window.hljs.highlightElement(code);
    });
  }
}
