// Sorting for the class page's tables (tools/scalebook/grading/pages.py inlines it; the page's only script).
// A header's button sorts its column: numbers by the cell's data-value, text by the cell's text;
// a second click reverses. It reads text and attributes, never markup, and writes none.
(function () {
  "use strict";
  // Names in a natural order, as pages.py lists them first: case aside, digit runs by their value
  // (student2 before student10), anything else by character code.
  function natural(a, b) {
    var x = a.toLowerCase().match(/\d+|\D+/g) || [];
    var y = b.toLowerCase().match(/\d+|\D+/g) || [];
    for (var i = 0; i < Math.min(x.length, y.length); i++) {
      if (x[i] === y[i]) {
        continue;
      }
      if (/^\d/.test(x[i]) && /^\d/.test(y[i])) {
        var p = x[i].replace(/^0+/, ""), q = y[i].replace(/^0+/, "");
        if (p.length !== q.length) {
          return p.length < q.length ? -1 : 1;
        }
        if (p !== q) {
          return p < q ? -1 : 1;
        }
        continue;
      }
      return x[i] < y[i] ? -1 : 1;
    }
    return x.length - y.length;
  }
  function key(row, column, kind) {
    var cell = row.cells[column];
    if (kind === "number") {
      var number = parseFloat(cell.getAttribute("data-value"));
      return isNaN(number) ? -Infinity : number;
    }
    return cell.textContent.trim();
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var headers = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(headers, function (header, column) {
      var button = header.querySelector("button.sort");
      if (!button) {
        return;
      }
      button.addEventListener("click", function () {
        var kind = button.getAttribute("data-kind");
        var ascending = header.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(headers, function (other) { other.removeAttribute("aria-sort"); });
        header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a, column, kind);
          var y = key(b, column, kind);
          var order = kind === "number" ? (x < y ? -1 : x > y ? 1 : 0) : natural(x, y);
          return ascending ? order : -order;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  });
})();
