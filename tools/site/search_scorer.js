/* Search ranking for the book (tools/site/search.py; html_search_scorer in _config.yml).
 *
 * Sphinx's weights (title 15, term 5) are kept; a result's score also gains, for every
 * word of the query, 15 when a heading of its page holds the word and 5 when only its
 * text does, so a page whose headings hold the whole query ranks above one that holds
 * a single word; ties go to the page the book reaches first (chapters in order).
 */
var Scorer = {
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
  _words: null,
  _query: null,
  // The query's words as the index holds them (Sphinx's splitter, stop words and stemmer).
  words() {
    const query = new URLSearchParams(window.location.search).get("q") || "";
    if (query !== this._query) {
      const stemmer = new Stemmer();
      this._query = query;
      this._words = [...new Set(splitQuery(query.toLowerCase().trim())
        .filter((word) => word[0] !== "-" && !stopwords.includes(word) && !/^\d+$/.test(word))
        .map((word) => stemmer.stemWord(word)))];
    }
    return this._words;
  },
  holds(map, word, file) {
    const files = map[word];
    return files !== undefined && (files === file || (Array.isArray(files) && files.includes(file)));
  },
  score(result) {
    const [docname, , , , score] = result;
    const index = Search._index;
    const file = index.docnames.indexOf(docname);
    if (file < 0) return score;
    let gained = 0;
    for (const word of this.words()) {
      if (this.holds(index.titleterms, word, file)) gained += this.title;
      else if (this.holds(index.terms, word, file)) gained += this.term;
    }
    // Chapters in order, then the other pages: a fraction of a point, only to break ties.
    const chapter = /^notebooks\/(\d+)_/.exec(docname);
    const order = chapter ? Number(chapter[1]) : 100;
    return score + gained + (1 - order / 1000) * 0.5;
  },
};

/* A result opens the section that holds the query, not the top of its page (issue 46,
 * item 8: "YaRN attention factor" opened the top of a chapter tens of thousands of pixels
 * long). Sphinx fetches each result's page to write its summary and hands
 * Search.makeSearchSummary the page's HTML with the query's stemmed words: there the
 * section of the page (not the page itself) that holds the most of the words is found,
 * the one whose heading holds more of them on a tie, then the first; the result's link gets
 * its anchor, and the summary is taken from that section. A result that already has an
 * anchor (a heading's or an index entry's) keeps it. This file is Sphinx's scorer, loaded
 * after searchtools.js on the search page only.
 */
const PosencSections = {
  // Whether `text` (lower case) holds `word` where a word starts (the stem "attent" in "attention").
  holds(text, word) {
    const escaped = word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    return new RegExp(`(^|[^\\p{L}\\p{N}_])${escaped}`, "u").test(text);
  },
  // The id of the section of `htmlText` that best holds `keywords`, or "" if none holds any.
  best(htmlText, keywords) {
    const words = [...keywords].map((word) => String(word).toLowerCase()).filter(Boolean);
    const page = new DOMParser().parseFromString(htmlText, "text/html");
    const main = page.querySelector('[role="main"]');
    if (!main || !words.length) return "";
    let best = "";
    let bestKey = [0, 0];
    for (const section of main.querySelectorAll("section[id]")) {
      if (!section.parentElement.closest("section")) continue; // the page's own section: its top
      const text = section.textContent.toLowerCase();
      const heading = (section.querySelector("h1, h2, h3, h4, h5, h6")?.textContent || "").toLowerCase();
      const key = [words.filter((w) => this.holds(text, w)).length, words.filter((w) => this.holds(heading, w)).length];
      if (key[0] > bestKey[0] || (key[0] === bestKey[0] && key[0] > 0 && key[1] > bestKey[1])) {
        best = section.id;
        bestKey = key;
      }
    }
    return best;
  },
};
if (typeof Search !== "undefined" && Search.makeSearchSummary) {
  const sphinxSummary = Search.makeSearchSummary;
  Search.makeSearchSummary = (htmlText, keywords, anchor) => {
    const found = anchor ? "" : PosencSections.best(htmlText, keywords);
    const summary = sphinxSummary(htmlText, keywords, found ? `#${CSS.escape(found)}` : anchor);
    if (found && summary) {
      // Sphinx appends the summary to its result right after this returns: then give the link its anchor.
      queueMicrotask(() => {
        const link = summary.parentElement && summary.parentElement.querySelector("a");
        const href = link && link.getAttribute("href");
        if (href && !href.includes("#")) link.setAttribute("href", `${href}#${found}`);
      });
    }
    return summary;
  };
}
