module sno.dev/callers-go

go 1.19
