# Chapter 4 figure: the attention weights of an 8-token causal example, as a heatmap.
# Data: ch04_mask_heatmap.dat, written by the lesson (row i = query i, column j = key j).
# Masked cells hold exactly 0: they are left white, so that no weight, however small, looks
# like one. The build sets the terminal and the output file.
set title "Causal attention weights, 8 tokens: white cells are masked (weight exactly 0)"
set xlabel "key position j"
set ylabel "query position i"
set xrange [-0.5:7.5]
set yrange [7.5:-0.5]  # query 0 at the top, as the matrix is printed
set xtics 0, 1, 7 nomirror out
set ytics 0, 1, 7 nomirror out
set size ratio -1
set cbrange [0:1]
set cblabel "attention weight"
set cbtics 0, 0.25, 1
set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')
# Thin lines between the cells.
do for [c = 0:8] {
  set arrow from c - 0.5, -0.5 to c - 0.5, 7.5 nohead lc rgb '#bbbbbb' lw 0.5 front
  set arrow from -0.5, c - 0.5 to 7.5, c - 0.5 nohead lc rgb '#bbbbbb' lw 0.5 front
}
unset key
plot 'ch04_mask_heatmap.dat' matrix using 1:2:($3 == 0 ? NaN : $3) with image pixels, \
     '' matrix using 1:2:($3 == 0 ? "0" : "") with labels font ",12" tc rgb '#999999', \
     '' matrix using 1:2:($3 > 0 && $3 < 0.5 ? sprintf("%.2f", $3) : "") with labels font ",12" tc rgb 'white', \
     '' matrix using 1:2:($3 >= 0.5 ? sprintf("%.2f", $3) : "") with labels font ",12" tc rgb 'black'
