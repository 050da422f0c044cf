module kubeloop.dev/samples/config-reloader

go 1.22

require github.com/kubeloop/kubeloop/sdk/go v0.0.0

replace github.com/kubeloop/kubeloop/sdk/go => ../../../sdk/go
