/* scalebook's reading aids, on every page of the book (loaded by docs/header.html).
 *
 *  - Math in titles: page titles, section headings and figure captions may hold TeX between $...$
 *    (written $\\sqrt{d_k}$ in a Markdown title: Doxygen allows no \f$ there). It is typeset by
 *    MathJax in the page, the table of contents and the sidebar, and turned into plain text
 *    (√dₖ) for the window title and the phone menu.
 *  - Code snippets lose the indentation they had in their source file.
 *  - Figures open full size when tapped (docs/accessible_pages.py names them for screen readers).
 *  - A "Contents" button reaches the page's table of contents from anywhere on the page, and a
 *    "Chapters" menu lists the book's pages on a phone, where the sidebar is hidden.
 *  - The keyboard reaches everything: the sidebar's expand/collapse arrows (named, and saying
 *    whether they are open), Doxygen's other clickable arrows and icons, and boxes that scroll.
 *  - Long formulas break again at the new width when a phone turns or a window is resized
 *    (MathJax 2 breaks them once, at the width of their box when it first typesets them).
 *  - Linked names show their brief description, math typeset, in a tooltip: those in code blocks
 *    (Doxygen's hidden div.ttc, given back their formulas by docs/tooltip_math.py) and links in
 *    the prose (data-scalebook-tip, from the same script). Doxygen 1.9.4 writes the former but
 *    never shows them, and writes the latter as plain-text titles without their formulas.
 */
(function () {
  "use strict";

  var SUBSCRIPTS = { "0": "₀", "1": "₁", "2": "₂", "3": "₃", "4": "₄", "5": "₅", "6": "₆", "7": "₇",
                     "8": "₈", "9": "₉", "i": "ᵢ", "j": "ⱼ", "k": "ₖ", "m": "ₘ", "n": "ₙ", "t": "ₜ",
                     "h": "ₕ", "l": "ₗ", "p": "ₚ", "s": "ₛ", "x": "ₓ", "a": "ₐ", "e": "ₑ", "o": "ₒ" };
  var SYMBOLS = { "sqrt": "√", "top": "ᵀ", "infty": "∞", "cdot": "·", "times": "×", "le": "≤",
                  "ge": "≥", "ln": "ln", "log": "log", "exp": "exp", "mathrm": "", "mathbf": "" };

  // A plain-text rendering of a little TeX, for places MathJax does not reach.
  function texToText(tex) {
    return tex.replace(/\\\\/g, "\\")
      .replace(/\\([A-Za-z]+)/g, function (all, name) { return name in SYMBOLS ? SYMBOLS[name] : name; })
      .replace(/_\{([^}]*)\}|_(\w)/g, function (all, group, one) {
        var s = group || one, out = "";
        for (var i = 0; i < s.length; i++) {
          if (!(s[i] in SUBSCRIPTS)) return "_" + s;
          out += SUBSCRIPTS[s[i]];
        }
        return out;
      })
      .replace(/\^\{?2\}?/g, "²").replace(/[{}]/g, "");
  }
  function plainTitle(text) {
    return text.replace(/\$([^$]+)\$/g, function (all, tex) { return texToText(tex); });
  }
  window.scalebookPlainTitle = plainTitle;

  // $...$ in the text nodes of `root` becomes \(...\) for MathJax; returns whether any did.
  function markMath(root) {
    var found = false;
    var walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    var nodes = [];
    for (var node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.nodeValue.indexOf("$") >= 0 && !node.parentElement.closest("script, code, pre, .fragment, .MathJax"))
        nodes.push(node);
    }
    nodes.forEach(function (n) {
      var replaced = n.nodeValue.replace(/\$([^$]+)\$/g, function (all, tex) {
        found = true;
        return "\\(" + tex.replace(/\\\\/g, "\\") + "\\)";
      });
      if (replaced !== n.nodeValue) n.nodeValue = replaced;
    });
    return found;
  }
  var TITLED = ".title, .caption, table.directory, div.contents a.el, div.contents h1, div.contents h2, div.contents h3, div.toc, .scalebook-pager, #nav-path";
  function typeset(el) {
    if (window.MathJax && MathJax.Hub && MathJax.Hub.Queue) MathJax.Hub.Queue(["Typeset", MathJax.Hub, el]);
  }

  // Leading spaces common to every line of a code block (a snippet cut out of a function body).
  function dedent(fragment) {
    var lines = fragment.querySelectorAll("div.line");
    var common = Infinity;
    lines.forEach(function (line) {
      var text = line.textContent;
      if (!text.trim()) return;
      common = Math.min(common, text.match(/^ */)[0].length);
    });
    if (!common || common === Infinity) return;
    lines.forEach(function (line) {
      var left = common;
      var walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
      for (var node = walker.nextNode(); node && left > 0; node = walker.nextNode()) {
        var spaces = node.nodeValue.match(/^ */)[0].length;
        var cut = Math.min(spaces, left);
        node.nodeValue = node.nodeValue.slice(cut);
        left -= cut;
        if (node.nodeValue.length) break;
      }
    });
  }

  function figures() {
    document.querySelectorAll("div.contents div.image").forEach(function (box) {
      var figure = box.querySelector("object, img");
      if (!figure || figure.closest("a")) return;
      var source = figure.getAttribute("data") || figure.getAttribute("src");
      var caption = box.querySelector(".caption");
      var name = caption ? plainTitle(caption.textContent.trim()) : "";
      // docs/accessible_pages.py names each SVG figure by its <title> (what it shows); the caption
      // names a figure that came without one.
      if (figure.tagName === "OBJECT") {
        figure.setAttribute("role", "img");
        if (name && !figure.getAttribute("aria-label")) figure.setAttribute("aria-label", name);
      } else if (name && !figure.getAttribute("alt")) {
        figure.setAttribute("alt", name);
      }
      var link = document.createElement("a");
      link.className = "scalebook-figure-link";
      link.href = source;
      link.title = "Open the figure full size";
      figure.parentNode.insertBefore(link, figure);
      link.appendChild(figure);
    });
  }

  function contentsButton() {
    var toc = document.querySelector("div.contents div.toc");
    if (!toc) return;
    if (!toc.id) toc.id = "scalebook-toc";
    var button = document.createElement("a");
    button.className = "scalebook-toc-button";
    button.href = "#" + toc.id;
    button.textContent = "Contents";
    button.title = "Back to this page's table of contents";
    document.body.appendChild(button);
  }

  function chaptersMenu() {
    var cell = document.getElementById("titlearea");
    if (!cell || typeof NAVTREE === "undefined" || !NAVTREE[0] || !NAVTREE[0][2]) return;
    var menu = document.createElement("details");
    menu.className = "scalebook-phone-menu";
    var summary = document.createElement("summary");
    summary.textContent = "Chapters";
    menu.appendChild(summary);
    var list = document.createElement("ul");
    var entries = [["Main page", NAVTREE[0][1]]].concat(NAVTREE[0][2]);
    var seen = {};
    entries.forEach(function (entry) {
      if (!entry[1] || !/\.html/.test(entry[1]) || /^(files|pages|dir_)/.test(entry[1])) return;
      var page = entry[1].split("#")[0];
      if (seen[page]) return;  // the main page is both the tree's root and its first entry
      seen[page] = true;
      var item = document.createElement("li");
      var a = document.createElement("a");
      a.href = entry[1];  // every page is in the one html folder
      a.textContent = plainTitle(entry[0]);
      item.appendChild(a);
      list.appendChild(item);
    });
    menu.appendChild(list);
    cell.appendChild(menu);
  }

  // Tooltips for linked names, with jQuery PowerTip (shipped in Doxygen's jquery.js); the math in
  // the one on screen is typeset when it opens, and the tip placed again at its typeset size.
  function tooltips() {
    if (!window.jQuery || !$.fn.powerTip) return;
    var options = { placement: "s", smartPlacement: true, mouseOnToPopup: true };
    $("a.code, a.codeRef").each(function () {
      var href = this.getAttribute("href") || "";
      var tip = document.getElementById("a" + href.replace(/.*\//, "").replace(/[^a-z_A-Z0-9]/g, "_"));
      if (!tip || !tip.classList.contains("ttc")) return;
      $(this).data("powertip", tip.innerHTML).powerTip(options);
    });
    $("a.el[data-scalebook-tip]").each(function () {
      $(this).data("powertip", '<div class="ttdoc">' + this.getAttribute("data-scalebook-tip") + "</div>")
        .powerTip(options);
    });
    // The tooltip opens with the focus on its link and is put at the end of the page: the links it
    // holds (the name it describes) are for the mouse, and no Tab stop of their own, else the Tab
    // key, past the page's last link, lands in a tooltip still fading out, far from the text.
    $(document).on("powerTipRender", function () {
      var tip = document.getElementById("powerTip");
      if (tip) tip.querySelectorAll("a[href]").forEach(function (a) { a.setAttribute("tabindex", "-1"); });
    });
    $(document).on("powerTipOpen", function (event) {
      var tip = document.getElementById("powerTip");
      if (!tip || !window.MathJax || !MathJax.Hub || !MathJax.Hub.Queue) return;
      MathJax.Hub.Queue(["Typeset", MathJax.Hub, tip], function () {
        if ($(tip).is(":visible")) $.powerTip.reposition($(event.target));
      });
    });
  }

  // After a change of width (a phone turned, a window resized), typeset the math again so that
  // MathJax breaks long formulas at their boxes' new width, once the resizing has settled.
  function rebreakOnResize() {
    var width = window.innerWidth, timer = null;
    window.addEventListener("resize", function () {
      if (window.innerWidth === width) return;
      width = window.innerWidth;
      clearTimeout(timer);
      timer = setTimeout(function () {
        if (window.MathJax && MathJax.Hub && MathJax.Hub.Queue) MathJax.Hub.Queue(["Rerender", MathJax.Hub], scrollableByKeyboard);
        else scrollableByKeyboard();
      }, 250);
    });
  }

  // The sidebar's expand/collapse arrows (navtree.js: links holding ► or ▼) say what they open and
  // whether it is open, instead of "black right-pointing pointer".
  function labelToggles(tree) {
    tree.querySelectorAll(".item > a:first-child").forEach(function (toggle) {
      var arrow = toggle.querySelector(".arrow");
      var label = toggle.parentElement.querySelector(".label");
      if (!arrow || !label) return;
      var open = arrow.textContent.indexOf("\u25bc") >= 0;
      if (toggle.getAttribute("aria-expanded") !== String(open)) toggle.setAttribute("aria-expanded", String(open));
      var name = "Contents of " + plainTitle(label.textContent.trim());
      if (toggle.getAttribute("aria-label") !== name) toggle.setAttribute("aria-label", name);
    });
  }

  // What Doxygen makes clickable without a link or a button (the folder arrows and detail levels of
  // the file and class lists, the sidebar's sync button) becomes a button the keyboard reaches and
  // Enter or Space presses, named for screen readers.
  function asButton(el, name) {
    if (!el.hasAttribute("tabindex")) {
      el.setAttribute("tabindex", "0");
      el.setAttribute("role", "button");
      el.addEventListener("keydown", function (event) {
        if (event.key !== "Enter" && event.key !== " ") return;
        event.preventDefault();
        el.click();
      });
    }
    if (name && el.getAttribute("aria-label") !== name) el.setAttribute("aria-label", name);
  }
  function folderState(arrow) {
    arrow.setAttribute("aria-expanded", String(arrow.textContent.indexOf("\u25bc") >= 0));
  }
  function keyboardButtons() {
    document.querySelectorAll("table.directory span.arrow[onclick]").forEach(function (arrow) {
      var row = arrow.closest("tr");
      var link = row && row.querySelector("a");
      asButton(arrow, "Contents of " + (link ? link.textContent.trim() : "this folder"));
      folderState(arrow);
      arrow.addEventListener("click", function () {
        setTimeout(function () {
          document.querySelectorAll("table.directory span.arrow[onclick]").forEach(folderState);
        }, 0);
      });
    });
    // The folder icon beside each arrow does what the arrow does: one Tab stop is enough.
    document.querySelectorAll("table.directory span[onclick]:not(.arrow)").forEach(function (icon) {
      icon.setAttribute("aria-hidden", "true");
    });
    document.querySelectorAll("div.levels span[onclick]").forEach(function (level) {
      asButton(level, "Show " + level.textContent.trim() + " level" + (level.textContent.trim() === "1" ? "" : "s"));
    });
  }
  function syncButton(tree) {
    var sync = tree.querySelector("#nav-sync");
    var image = sync && sync.querySelector("img");
    if (!image) return;
    if (image.getAttribute("alt") !== image.title) image.setAttribute("alt", image.title);
    asButton(sync, image.title);
  }

  // A box that scrolls sideways (code, output or a formula wider than a phone) and holds nothing
  // the Tab key stops at is made a stop itself, so that the arrow keys scroll it.
  function scrollableByKeyboard() {
    document.querySelectorAll("div.contents div.fragment, div.contents pre, div.contents .MathJax_Display").forEach(function (box) {
      var scrolls = box.scrollWidth > box.clientWidth + 1;
      var focusable = box.querySelector("a[href], button, input, [tabindex]:not([tabindex='-1'])");
      if (scrolls && !focusable && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        box.setAttribute("aria-label", box.closest(".scalebook-output") ? "Lesson output" :
                                       box.classList.contains("MathJax_Display") ? "Formula" : "Code");
      } else if (!scrolls && box.getAttribute("role") === "region") {
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    });
  }

  document.title = plainTitle(document.title);
  $(function () {
    document.querySelectorAll(TITLED).forEach(markMath);
    document.querySelectorAll("div.fragment").forEach(dedent);
    rebreakOnResize();
    figures();
    contentsButton();
    chaptersMenu();
    tooltips();
    keyboardButtons();
    if (window.MathJax && MathJax.Hub && MathJax.Hub.Queue) MathJax.Hub.Queue(scrollableByKeyboard);
    else scrollableByKeyboard();
    // The sidebar is filled in (and opened further) by navtree.js after the page has loaded.
    var tree = document.getElementById("nav-tree");
    if (tree && window.MutationObserver) {
      var pending = false;
      new MutationObserver(function () {
        if (pending) return;
        pending = true;
        setTimeout(function () {
          pending = false;
          labelToggles(tree);
          syncButton(tree);
          if (markMath(tree)) typeset(tree);
        }, 0);
      }).observe(tree, { childList: true, subtree: true });
      labelToggles(tree);
      syncButton(tree);
      if (markMath(tree)) typeset(tree);
    }
  });
})();
