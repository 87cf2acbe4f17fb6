# Chapter 5 figure: each head's attention weights on the same 5 tokens, side by side.
# Data: ch05_head_weights_h0.dat .. h2.dat, written by the lesson (row i = query i, column j =
# key j; PyTorch's layer from the fixtures, E = 12, H = 3). The build sets the terminal and output.
set multiplot layout 1, 3 margins 0.08, 0.98, 0.17, 0.78 spacing 0.05 title "Three heads, one input: each head weighs the keys differently\n{/*0.85 self-attention on 5 tokens, E = 12, H = 3, scores divided by sqrt(head\\_dim) = 2}"
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
  set title sprintf("head %d", h)
  if (h == 0) { set ylabel "query i" } else { unset ylabel }
  file = sprintf("ch05_head_weights_h%d.dat", h)
  plot file matrix using 1:2:3 with image pixels, \
       '' matrix using 1:2:($3 < 0.5 ? sprintf("%.2f", $3) : "") with labels font ",8" tc rgb 'white', \
       '' matrix using 1:2:($3 >= 0.5 ? sprintf("%.2f", $3) : "") with labels font ",8" tc rgb 'black'
}
unset multiplot
