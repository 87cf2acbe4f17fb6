# Chapter 7 figure: which tiles tiled causal attention computes, for 32 x 32 scores in tiles of 8.
# Data: ch07_tiles.dat (2 = allowed score, 1 = masked score inside a computed tile, 0 = in a
# skipped tile), written by the lesson. The build sets the terminal and the output file.
set title "Causal attention in 8 x 8 tiles: tiles above the diagonal are never computed"
set xlabel "key j"
set ylabel "query i"
set xrange [-0.5:31.5]
set yrange [31.5:-0.5]
set size ratio -1
# Three categories, three flat colours: a palette of exactly three (maxcolors), each value centred
# in its band of the colour box, and a grey that reads as grey on white.
set cbrange [-0.5:2.5]
set cbtics ("skipped tile" 0, "masked" 1, "used" 2)
set palette maxcolors 3
set palette defined (0 '#bdbdbd', 1 '#fdb863', 2 '#5e3c99')
set xtics 0, 8, 32 nomirror out
set ytics 0, 8, 32 nomirror out
do for [c = 0:4] {
  set arrow from 8 * c - 0.5, -0.5 to 8 * c - 0.5, 31.5 nohead lc rgb '#444444' lw 1 front
  set arrow from -0.5, 8 * c - 0.5 to 31.5, 8 * c - 0.5 nohead lc rgb '#444444' lw 1 front
}
unset key
plot 'ch07_tiles.dat' matrix using 1:2:3 with image pixels
