# Chapter 5 figure: each head's attention weights on the same 5 tokens, side by side.
# Data: ch05_head_weights_h0.dat .. h2.dat, written by the lesson (row i = query i, column j =
# key j; PyTorch's layer from the fixtures, E = 12, H = 3). The build sets the terminal and output;
# the book's caption is the visible title, `set title` names the SVG (cmake/draw_figure.cmake).
set title "Three heads, one input: each head weighs the keys differently"
set multiplot layout 1, 3 margins 0.08, 0.98, 0.17, 0.88 spacing 0.05
unset title
set xrange [-0.5:4.5]
set yrange [4.5:-0.5]  # query 0 at the top, as the matrices are printed
set xtics 0, 1, 4 nomirror out
set ytics 0, 1, 4 nomirror out
set cbrange [0:1]
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
unset colorbox
unset key
set xlabel "key j"
do for [h = 0:2] {
  set label 1 sprintf("head %d", h) at graph 0.5, graph 1.07 center
  if (h == 0) { set ylabel "query i" } else { unset ylabel }
  file = sprintf("ch05_head_weights_h%d.dat", h)
  plot file matrix using 1:2:3 with image pixels, \
       '' matrix using 1:2:($3 < 0.5 ? sprintf("%.1f", $3) : "") with labels font ",12" tc rgb 'white', \
       '' matrix using 1:2:($3 >= 0.5 ? sprintf("%.1f", $3) : "") with labels font ",12" tc rgb 'black'
}
unset multiplot
