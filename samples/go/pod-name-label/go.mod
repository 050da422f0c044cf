module kubeloop.dev/samples/pod-name-label

go 1.22
