// Package deploy holds no code of the shop: its tests check what deploy/
// ships. chart_test.go renders the Helm chart (deploy/helm/shopbot) with
// each example values file and decodes every object strictly into the
// Kubernetes API types, then checks what the shop needs of them. It is a
// module of its own so that the shop's go.mod stays free of Kubernetes.
package deploy
