# Chapter 5 figure: which head owns each column of a projection (Q, K, V) and of the concatenation.
# Data: ch05_concat_layout.dat, written by the lesson: one row per layout, one column per feature
# (E = 12), each entry the head that owns the column. Row 0 comes from split_heads and concat_heads
# themselves; rows 1 and 2 are two classic mistakes. The build sets the terminal and output;
# the book's caption is the visible title, `set title` names the SVG (cmake/draw_figure.cmake).
set title "Head h owns columns h·head\\_dim .. (h+1)·head\\_dim − 1 of Q, K, V and of the concatenation"
set xrange [-0.5:11.5]
set yrange [2.5:-0.5]
set xtics 0, 1, 11 nomirror out
set ytics ("split\\_heads / concat\\_heads\n(contiguous blocks)" 0, "wrong: interleaved split\n(reshape to (n, head\\_dim, H))" 1, "wrong: concatenation\nin reverse head order" 2) nomirror
set xlabel "column of Q, K, V and of the concatenated head outputs"
set cbrange [-0.5:2.5]
set palette defined (0 '#4c72b0', 1 '#dd8452', 2 '#55a868')
set palette maxcolors 3
unset colorbox
unset key
set lmargin 30
set rmargin 3
do for [c = 0:12] {
  set arrow from c - 0.5, -0.5 to c - 0.5, 2.5 nohead lc rgb 'white' lw 2 front
}
do for [r = 0:3] {
  set arrow from -0.5, r - 0.5 to 11.5, r - 0.5 nohead lc rgb 'white' lw 4 front
}
plot 'ch05_concat_layout.dat' matrix using 1:2:3 with image pixels, \
     '' matrix using 1:2:(sprintf("h%d", int($3))) with labels font ",12" tc rgb 'white'
