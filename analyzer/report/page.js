// Sortable tables: a click (or Enter) on a column heading sorts the rows
// by it; numeric columns (class "num") sort by each cell's data-v value,
// largest first on the first click; others by text, A to Z first.
(function () {
  "use strict";
  function key(cell, numeric) {
    if (numeric) {
      var v = parseFloat(cell.getAttribute("data-v"));
      return isNaN(v) ? -Infinity : v;
    }
    return cell.getAttribute("data-v") || cell.textContent.trim().toLowerCase();
  }
  function sortBy(table, col, th) {
    var numeric = th.classList.contains("num");
    var cur = th.getAttribute("aria-sort");
    var asc = cur ? cur === "descending" : !numeric;
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.forEach(function (r, i) { r.setAttribute("data-i", i); });
    rows.sort(function (a, b) {
      var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
      var c = x < y ? -1 : x > y ? 1 : 0;
      if (!asc) { c = -c; }
      return c || (+a.getAttribute("data-i") - +b.getAttribute("data-i"));
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", asc ? "ascending" : "descending");
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.tabIndex = 0;
      th.addEventListener("click", function () { sortBy(table, col, th); });
      th.addEventListener("keydown", function (e) {
        if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sortBy(table, col, th); }
      });
    });
  });
})();
