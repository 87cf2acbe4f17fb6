# Chapter 8: SCALEBOOK-TODO what the figure shows.
# Data: ch08_first_look.dat, written by the lesson. The build sets the terminal and the output file.
set title "SCALEBOOK-TODO the figure's title"
set xlabel "x"
set ylabel "y"
plot "ch08_first_look.dat" using 1:2 with linespoints title "y"
