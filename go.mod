module github.com/vesta-go/vesta

go 1.25.0

require (
	github.com/stretchr/testify v1.12.1
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/sync v0.20.0
)
