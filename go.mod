module shopbot

go 1.26.8
