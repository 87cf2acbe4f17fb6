# What attention computes, drawn for the book's main page (no data: the cells are a diagram).
# Queries Q (n x d_k), keys K (m x d_k) and values V (m x d_v): the score matrix QK^T/sqrt(d_k) has
# one row per query and one column per key; the causal mask sets the scores above the diagonal to
# -inf; softmax turns each row into weights, and the weights mix the rows of V.
# The build sets the terminal and the output file (cmake/draw_figure.cmake).
set title "Attention: queries meet keys, weights mix values"
unset border; unset tics; unset key
set xrange [0:72]; set yrange [8:43]
set size ratio -1
set lmargin 0; set rmargin 0; set tmargin 0; set bmargin 0
n = 4; d = 3; c = 3.0
# A grid of cells: rows r, columns k, lower-left corner (x0, y0 at the top edge).
q = "#d6eaf8"; k = "#fdebd0"; v = "#d5f5e3"; s = "#ebdef0"; m = "#bbbbbb"
o = 1
do for [i=0:n-1] { do for [j=0:d-1] {
  set object o rect from 2+j*c, 30-i*c to 2+(j+1)*c, 30-(i+1)*c fc rgb q fs solid border lc rgb "#2471a3"; o = o + 1 } }
do for [i=0:d-1] { do for [j=0:n-1] {
  set object o rect from 18+j*c, 39-i*c to 18+(j+1)*c, 39-(i+1)*c fc rgb k fs solid border lc rgb "#b9770e"; o = o + 1 } }
do for [i=0:n-1] { do for [j=0:n-1] {
  set object o rect from 18+j*c, 30-i*c to 18+(j+1)*c, 30-(i+1)*c fc rgb (j > i ? m : s) fs solid border lc rgb "#7d3c98"; o = o + 1
  if (j > i) { set label "−∞" at 18+(j+0.5)*c, 30-(i+0.5)*c center font ",13" tc rgb "#555555" } } }
do for [i=0:n-1] { do for [j=0:d-1] {
  set object o rect from 44+j*c, 30-i*c to 44+(j+1)*c, 30-(i+1)*c fc rgb v fs solid border lc rgb "#1e8449"; o = o + 1 } }
do for [i=0:n-1] { do for [j=0:d-1] {
  set object o rect from 60+j*c, 30-i*c to 60+(j+1)*c, 30-(i+1)*c fc rgb "#fcf3cf" fs solid border lc rgb "#7d6608"; o = o + 1 } }
set label "Q: a query per row" at 7, 16 center font ",14"
set label "(n × d_k)" at 6.5, 13.5 center font ",13"
set label "K^T: one key per column" at 24, 41.5 center font ",14"
set label "scores QK^T / √d_k" at 24, 16 center font ",14"
set label "row i: query i against every key" at 24, 13.5 center font ",13"
set label "grey: causal mask, key j > i" at 24, 11 center font ",13"
set label "softmax of each row" at 36.5, 26 center font ",13"
set label "→" at 36.5, 22.5 center font ",22"
set label "weights × V" at 36.5, 19 center font ",13"
set label "V: one value per key" at 48.5, 16 center font ",14"
set label "(m × d_v)" at 48.5, 13.5 center font ",13"
set label "=" at 57, 24 center font ",22"
set label "output: row i mixes" at 64.5, 16 center font ",14"
set label "the values of keys j ≤ i" at 64.5, 13.5 center font ",13"
set label "Q" at 6.5, 32.5 center font ",14"
set label "V" at 48.5, 32.5 center font ",14"
set label "out" at 64.5, 32.5 center font ",14"
set label "×" at 14.5, 24 center font ",20"
plot NaN notitle
