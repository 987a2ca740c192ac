module npc_guard

go 1.19

require percept v0.0.0

replace percept => ../../../bindings/go
