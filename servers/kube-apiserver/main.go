// Command kube-apiserver starts a real kube-apiserver (k8s.io/kubernetes, pinned in go.mod)
// on loopback with an embedded etcd and Kubernetes' namespace controller, for informer-mem's
// tests and for users without a cluster. See docs/kube-apiserver.md.
//
//	kube-apiserver --dir DIR [--port N] [--remove-dir-on-exit] [-- KUBE-APISERVER-FLAGS...]
//
// It makes, under DIR:
//
//	pki/ca.crt, pki/ca.key        a certificate authority of its own
//	pki/apiserver.crt, .key       the serving certificate (127.0.0.1, ::1, localhost)
//	pki/sa.key                    the service-account signing key
//	tokens.csv                    one bearer token, user "admin" in group system:masters
//	etcd/                         etcd's data
//	etcd-url                      etcd's client URL (its JSON gateway serves /v3/kv/...)
//	kube-apiserver.log            kube-apiserver's and etcd's log
//	kubeconfig                    written last, once /readyz answers 200: its presence
//	                              means the server is ready
//
// and prints "ready: DIR/kubeconfig" on stdout. SIGTERM or SIGINT stops kube-apiserver
// (graceful shutdown), then etcd, and it exits 0; with --remove-dir-on-exit it then removes
// DIR, for a caller that may die before it (informer-mem run --server kube-apiserver, whose
// death sends this process SIGTERM). A stop that takes over 30 s (kube-apiserver's
// graceful shutdown can hang when the signal comes during its start) exits 1 without
// waiting for the rest. Arguments after "--" are passed to
// kube-apiserver after its own (a later flag wins), for example
// --watch-cache-sizes=pods#0.
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap/zapcore"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
	namespacecontroller "k8s.io/kubernetes/pkg/controller/namespace"
)

const readyTimeout = 120 * time.Second

// How long a stop may take before the launcher exits without waiting for the rest.
const stopTimeout = 30 * time.Second

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "kube-apiserver: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	dir := flag.String("dir", "", "directory for certificates, etcd's data, the log and the kubeconfig (required)")
	port := flag.Int("port", 0, "kube-apiserver's secure port on 127.0.0.1 (0: a free one)")
	removeDir := flag.Bool("remove-dir-on-exit", false, "remove DIR once kube-apiserver and etcd have stopped cleanly")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: kube-apiserver --dir DIR [--port N] [--remove-dir-on-exit] [-- KUBE-APISERVER-FLAGS...]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *dir == "" {
		flag.Usage()
		os.Exit(2)
	}
	root, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(root, "pki"), 0o700); err != nil {
		return err
	}
	// A kubeconfig left by an earlier start would say "ready" too early.
	kubeconfig := filepath.Join(root, "kubeconfig")
	if err := os.Remove(kubeconfig); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}

	logPath := filepath.Join(root, "kube-apiserver.log")
	stderr, err := redirectStderr(logPath)
	if err != nil {
		return err
	}
	fail := func(err error) error {
		fmt.Fprintf(stderr, "kube-apiserver: %v (log: %s)\n", err, logPath)
		os.Exit(1)
		return nil
	}

	ports, err := freePorts(3)
	if err != nil {
		return fail(err)
	}
	if *port == 0 {
		*port = ports[0]
	}
	server := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(*port))

	pki, err := makePKI(filepath.Join(root, "pki"))
	if err != nil {
		return fail(fmt.Errorf("certificates: %w", err))
	}
	token, err := randomToken()
	if err != nil {
		return fail(err)
	}
	tokens := filepath.Join(root, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+`,admin,admin,"system:masters"`+"\n"), 0o600); err != nil {
		return fail(err)
	}

	// Deferred before etcd's Close, so it runs after: etcd's data goes once etcd is down.
	stopped := false
	defer func() {
		if stopped && *removeDir {
			if err := os.RemoveAll(root); err != nil {
				fmt.Fprintf(stderr, "kube-apiserver: removing %s: %v\n", root, err)
			}
		}
	}()
	// kube-apiserver's graceful shutdown has been seen to hang when the signal comes during
	// its start: a stop that takes longer than this ends the process, as a second signal
	// does, and with --remove-dir-on-exit removes DIR first.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-signals
		time.Sleep(stopTimeout)
		fmt.Fprintf(stderr, "kube-apiserver: still stopping %s after the signal: exiting\n", stopTimeout)
		if *removeDir {
			_ = os.RemoveAll(root)
		}
		os.Exit(1)
	}()
	etcd, etcdURL, err := startEtcd(filepath.Join(root, "etcd"), ports[1], ports[2])
	if err != nil {
		return fail(fmt.Errorf("etcd: %w", err))
	}
	defer etcd.Close()
	if err := os.WriteFile(filepath.Join(root, "etcd-url"), []byte(etcdURL+"\n"), 0o600); err != nil {
		return fail(err)
	}

	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(*port),
		"--tls-cert-file=" + pki.servingCert,
		"--tls-private-key-file=" + pki.servingKey,
		"--token-auth-file=" + tokens,
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + pki.saKey,
		"--service-account-signing-key-file=" + pki.saKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		// No kube-controller-manager runs here, so nothing makes a namespace's "default"
		// ServiceAccount, which this admission plugin requires of every pod.
		"--disable-admission-plugins=ServiceAccount",
	}
	args = append(args, flag.Args()...)

	cmd := app.NewAPIServerCommand()
	cmd.SetArgs(args)
	ctx := cmd.Context()
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()

	config := &rest.Config{
		Host:            server,
		BearerToken:     token,
		TLSClientConfig: rest.TLSClientConfig{CAData: pki.caPEM},
		QPS:             -1,
	}
	select {
	case err := <-waitReady(ctx, config):
		if err != nil {
			return fail(err)
		}
	case err := <-done:
		return fail(fmt.Errorf("exited before it was ready: %v", err))
	case <-etcd.Err():
		return fail(errors.New("etcd stopped before kube-apiserver was ready"))
	}
	if err := startNamespaceController(ctx, config); err != nil {
		return fail(fmt.Errorf("namespace controller: %w", err))
	}
	if err := writeKubeconfig(kubeconfig, server, pki.caPEM, token); err != nil {
		return fail(err)
	}
	fmt.Printf("ready: %s\n", kubeconfig)

	if err := <-done; err != nil {
		return fail(err)
	}
	stopped = true
	return nil
}

// redirectStderr sends this process's stderr (kube-apiserver's and etcd's logs) to path
// and returns the original stderr for the launcher's own errors.
func redirectStderr(path string) (*os.File, error) {
	log, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	saved, err := syscall.Dup(2)
	if err != nil {
		return nil, err
	}
	if err := syscall.Dup3(int(log.Fd()), 2, 0); err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(saved), "stderr"), nil
}

// freePorts finds n free loopback ports (another process may take one before it is used;
// unlikely on a test machine).
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomToken() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

func startEtcd(dir string, clientPort, peerPort int) (*embed.Etcd, string, error) {
	cfg := embed.NewConfig()
	cfg.Dir = dir
	// One member on loopback whose data is never kept: fsync buys nothing.
	cfg.UnsafeNoFsync = true
	client := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	peer := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = zapcore.WarnLevel.String()
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(readyTimeout):
		e.Close()
		return nil, "", fmt.Errorf("not ready after %s", readyTimeout)
	}
	return e, client.String(), nil
}

// waitReady polls /readyz until it answers 200.
func waitReady(ctx context.Context, config *rest.Config) <-chan error {
	out := make(chan error, 1)
	go func() {
		transport, err := rest.TransportFor(config)
		if err != nil {
			out <- err
			return
		}
		client := &http.Client{Transport: transport, Timeout: 5 * time.Second}
		deadline := time.Now().Add(readyTimeout)
		last := "no answer"
		for time.Now().Before(deadline) {
			if ctx.Err() != nil {
				out <- ctx.Err()
				return
			}
			resp, err := client.Get(config.Host + "/readyz")
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					out <- nil
					return
				}
				last = resp.Status
			} else {
				last = err.Error()
			}
			time.Sleep(100 * time.Millisecond)
		}
		out <- fmt.Errorf("/readyz did not answer 200 within %s (last: %s)", readyTimeout, last)
	}()
	return out
}

// startNamespaceController runs Kubernetes' namespace controller (kube-controller-manager's,
// with its defaults), so that deleting a namespace deletes what is in it and then the
// namespace, as on a cluster.
func startNamespaceController(ctx context.Context, config *rest.Config) error {
	config = rest.CopyConfig(config)
	config.UserAgent = "informer-mem-namespace-controller"
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	meta, err := metadata.NewForConfig(config)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	controller := namespacecontroller.NewNamespaceController(
		ctx,
		client,
		meta,
		client.Discovery().ServerPreferredNamespacedResources,
		factory.Core().V1().Namespaces(),
		5*time.Minute,
		v1.FinalizerKubernetes,
	)
	factory.Start(ctx.Done())
	go controller.Run(ctx, 10)
	return nil
}

func writeKubeconfig(path, server string, ca []byte, token string) error {
	text := strings.Join([]string{
		"apiVersion: v1",
		"kind: Config",
		"clusters:",
		"- name: kube-apiserver",
		"  cluster:",
		"    server: " + server,
		"    certificate-authority-data: " + base64.StdEncoding.EncodeToString(ca),
		"users:",
		"- name: admin",
		"  user:",
		"    token: " + token,
		"contexts:",
		"- name: kube-apiserver",
		"  context: {cluster: kube-apiserver, user: admin, namespace: default}",
		"current-context: kube-apiserver",
		"",
	}, "\n")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

type pkiFiles struct {
	caPEM       []byte
	servingCert string
	servingKey  string
	saKey       string
}

// makePKI writes a CA, a serving certificate it signs, and a service-account key.
func makePKI(dir string) (pkiFiles, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pkiFiles{}, err
	}
	now := time.Now()
	caTemplate := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "informer-mem-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.AddDate(1, 0, 0),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return pkiFiles{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return pkiFiles{}, err
	}
	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pkiFiles{}, err
	}
	servingTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.0.0.1")},
	}
	servingDER, err := x509.CreateCertificate(rand.Reader, servingTemplate, ca, &servingKey.PublicKey, caKey)
	if err != nil {
		return pkiFiles{}, err
	}
	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pkiFiles{}, err
	}

	files := pkiFiles{
		caPEM:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		servingCert: filepath.Join(dir, "apiserver.crt"),
		servingKey:  filepath.Join(dir, "apiserver.key"),
		saKey:       filepath.Join(dir, "sa.key"),
	}
	writes := []struct {
		path string
		data func() ([]byte, error)
	}{
		{filepath.Join(dir, "ca.crt"), func() ([]byte, error) { return files.caPEM, nil }},
		{filepath.Join(dir, "ca.key"), func() ([]byte, error) { return keyPEM(caKey) }},
		{files.servingCert, func() ([]byte, error) {
			return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: servingDER}), nil
		}},
		{files.servingKey, func() ([]byte, error) { return keyPEM(servingKey) }},
		{files.saKey, func() ([]byte, error) { return keyPEM(saKey) }},
	}
	for _, w := range writes {
		data, err := w.data()
		if err != nil {
			return pkiFiles{}, err
		}
		if err := os.WriteFile(w.path, data, 0o600); err != nil {
			return pkiFiles{}, err
		}
	}
	return files, nil
}

func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}
