module percept

go 1.19
