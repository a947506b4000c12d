module seedfall.test/antithesis

go 1.26

require github.com/antithesishq/antithesis-sdk-go v0.9.0

require github.com/seedfall/seedfall v0.0.0

replace github.com/seedfall/seedfall => ../../../..
