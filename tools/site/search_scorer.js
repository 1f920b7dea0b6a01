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
