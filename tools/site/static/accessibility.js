// WCAG 2.1 AA repairs for what exists only once the page runs (tools/site/accessibility.py).
// Runs after sphinx-togglebutton has added its buttons (both wait for DOMContentLoaded,
// and this file is registered later).
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  // Every fold button was "Toggle hidden content"; name it after what it folds.
  document.querySelectorAll("button.toggle-button").forEach((button) => {
    const title = button.closest(".admonition-title");
    const text = title ? title.textContent.replace(/\s+/g, " ").trim() : "";
    button.setAttribute("aria-label", text ? `Show or hide: ${text}` : "Show or hide this block");
  });

  // A region that scrolls must be reachable from the keyboard (WCAG 2.1.1): give it a
  // Tab stop, and only then, so formulas and short outputs stay out of the tab order.
  // Folded content has no size until it opens and tables widen when fonts arrive, so
  // the candidates are measured again whenever something may have changed a size.
  const candidates = "pre, .cell_output, .output_area, .table-wrapper, .pst-scrollable-table-container, "
    + "mjx-container[display='true']";
  const scrollable = (el) => el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
  // (The theme does the same once, at load, and gives every region it then finds
  // unscrollable, folded ones included, tabindex -1.)
  // A region marked here is unmarked when it stops scrolling (a formula measured
  // before its font arrived, a window made wider).
  const unmark = (el) => {
    if (el.dataset.scrollStop) {
      el.setAttribute("tabindex", "-1");
      delete el.dataset.scrollStop;
    }
  };
  const mark = (el) => {
    if (scrollable(el)) {
      if (el.tabIndex < 0) {
        el.setAttribute("tabindex", "0");
        el.dataset.scrollStop = "1";
      }
    } else {
      unmark(el);
    }
  };
  // Measuring every candidate costs well under a millisecond, so any change that can
  // alter a size (a fold opening, a font arriving, the window resizing) measures all.
  const elements = Array.from(document.querySelectorAll(candidates));
  let queued = false;
  // An inline formula wider than its paragraph (a long one, on a phone) scrolls in
  // place (layout.css, class math-too-wide) and so becomes such a region too.
  const inlineMath = Array.from(document.querySelectorAll("span.math"));
  const fitInline = (el) => {
    const formula = el.querySelector("mjx-container");
    const column = el.closest("p, li, dd, td, div");
    if (formula && column) {
      const wide = formula.getBoundingClientRect().width > column.clientWidth + 1;
      el.classList.toggle("math-too-wide", wide);
      if (wide) {
        mark(el);
      } else {
        unmark(el); // (an inline span has no client width: it is not measured)
      }
    }
  };
  // A region that scrolls sideways shows it: the edge with more beyond it fades
  // (layout.css: scroll-more-right, scroll-more-left), updated as the reader scrolls.
  const sideways = Array.from(document.querySelectorAll(`${candidates}, div.math, span.math`));
  const cue = (el) => {
    const overflow = getComputedStyle(el).overflowX;
    const scrolls = (overflow === "auto" || overflow === "scroll") && el.scrollWidth > el.clientWidth + 1;
    const left = Math.abs(el.scrollLeft);
    el.classList.toggle("scroll-more-right", scrolls && left + el.clientWidth < el.scrollWidth - 1);
    el.classList.toggle("scroll-more-left", scrolls && left > 1);
  };
  document.addEventListener(
    "scroll",
    (event) => {
      if (event.target instanceof Element && event.target.matches(".scroll-more-right, .scroll-more-left")) {
        cue(event.target);
      }
    },
    { capture: true, passive: true },
  );
  const markAll = () => {
    if (!queued) {
      queued = true;
      window.requestAnimationFrame(() => {
        queued = false;
        inlineMath.forEach(fitInline);
        elements.forEach(mark);
        sideways.forEach(cue);
      });
    }
  };
  const observer = new ResizeObserver(markAll);
  elements.forEach((el) => observer.observe(el));
  // A fold that opens makes the article taller, even when the region in it keeps its box.
  const article = document.querySelector("article") || document.body;
  observer.observe(article);
  document.addEventListener("toggle", markAll, true);
  document.addEventListener("transitionend", markAll, true);
  window.addEventListener("resize", markAll);
  document.addEventListener("click", markAll);
  window.addEventListener("load", markAll);
  document.fonts.ready.then(markAll);
  document.fonts.addEventListener("loadingdone", markAll);
  markAll();
});
