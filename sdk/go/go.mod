module github.com/kubeloop/kubeloop/sdk/go

go 1.22
