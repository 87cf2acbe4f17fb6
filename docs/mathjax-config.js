// Appended by Doxygen (MATHJAX_CODEFILE) to the MathJax configuration of every page of the book.
//
// MathJax 2's HTML-CSS output decides whether a web font has loaded by measuring text set in it
// against a dummy face, MathJax_Blank, declared with src: url('about:blank'). In a book opened from
// disk (file://) Chromium refuses that request and logs a CORS error on every page whose formulas
// need a second font (e.g. \mathbb). A local() source that names no installed font fails the same
// way (the measurement falls back to the default font, exactly as before), but silently and
// without a request.
MathJax.Hub.Config({
  "HTML-CSS": {
    styles: { "@font-face": { "font-family": "MathJax_Blank", src: "local('MathJax_Blank')" } }
  }
});

// MathJax loads its right-click menu and its zoom one and two seconds after the math is typeset,
// each time flashing a "Loading [MathJax]/extensions/..." box in the corner of a page the reader is
// already reading. Loaded with the other extensions instead, they are ready with the math.
// (Appended to Doxygen's list: MathJax.Hub.Config would replace the list, tex2jax.js included.)
MathJax.Hub.config.extensions = MathJax.Hub.config.extensions.concat(["MathMenu.js", "MathZoom.js"]);

// On a narrow screen a long formula breaks at the width of its box instead of widening the page
// (docs/scalebook.css lets a display formula that still does not fit scroll inside its own box).
MathJax.Hub.Config({ "HTML-CSS": { linebreaks: { automatic: true, width: "container" } } });

// The book brings its own fonts (the TeX web fonts copied next to the pages, docs/copy_mathjax.cmake)
// and needs nothing else: no fonts installed on the reader's machine (which differ from machine to
// machine), and no image fonts (not shipped; MathJax falls back to them when web fonts are slow).
MathJax.Hub.Config({ "HTML-CSS": { availableFonts: [], preferredFont: null, webFont: "TeX", imageFont: null } });

// No status box: MathJax 2 shows "Loading ..." / "Typesetting math: 100%" in the page's corner and
// clears it only a moment after the math is done; the book's math is local and typesets at once.
MathJax.Hub.Config({ messageStyle: "none" });

// Math a screen reader can read: AssistiveMML puts a visually hidden MathML copy beside each typeset
// formula (screen readers read MathML) and hides MathJax's drawing of it from them, which they would
// read as a string of single letters. And no formula is a stop of its own for the Tab key: with
// MathJax's default, a keyboard reader tabs through every formula of a page (124 on chapter 3)
// between one link and the next; the MathML copy needs no focus to be read.
// (MathJax.js loads the AssistiveMML extension itself when the setting is on.) The extension's
// "End Math" hook reads MathJax's element jax, which MathJax otherwise loads only with the first
// formula: on a page without one the hook failed, and MathJax never finished starting up.
MathJax.Hub.Config({ menuSettings: { assistiveMML: true, inTabOrder: false } });
MathJax.Hub.config.extensions = MathJax.Hub.config.extensions.concat(["[MathJax]/jax/element/mml/jax.js"]);
