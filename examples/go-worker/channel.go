package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// transportOptions is how the worker reaches the server: plaintext, TLS or
// mTLS, and a bearer token. Settings, from the environment only (a token on
// the command line would show in every process listing):
//
//	OJS_TLS_CA    PEM file of the CA that signed the server's certificate
//	OJS_TLS_CERT  PEM file of this worker's client certificate (mTLS)
//	OJS_TLS_KEY   PEM file of its private key
//	OJS_TLS       "true": TLS trusting the system's roots (implied by the above)
//	OJS_TOKEN     sent as "authorization: Bearer <token>" on every call
func transportOptions() ([]grpc.DialOption, error) {
	caFile, certFile, keyFile := os.Getenv("OJS_TLS_CA"), os.Getenv("OJS_TLS_CERT"), os.Getenv("OJS_TLS_KEY")
	token := os.Getenv("OJS_TOKEN")
	if os.Getenv("OJS_TLS") != "true" && caFile == "" && certFile == "" && keyFile == "" {
		if token != "" {
			return nil, errors.New("OJS_TOKEN needs TLS (OJS_TLS_CA, or OJS_TLS=true): in plaintext anyone on the path could read it")
		}
		// WithInsecure is grpc-go 1.33's plaintext option (Debian's version);
		// newer releases spell it grpc.WithTransportCredentials(insecure.NewCredentials()).
		return []grpc.DialOption{grpc.WithInsecure()}, nil
	}
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("OJS_TLS_CA: %w", err)
		}
		config.RootCAs = x509.NewCertPool()
		if !config.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OJS_TLS_CA: no PEM certificate in %s", caFile)
		}
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("OJS_TLS_CERT and OJS_TLS_KEY go together: a client certificate needs its key")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("OJS_TLS_CERT, OJS_TLS_KEY: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	options := []grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(config))}
	if token != "" {
		options = append(options, grpc.WithPerRPCCredentials(bearerToken(token)))
	}
	return options, nil
}

// bearerToken puts "authorization: Bearer <token>" on every call, and only
// ever over TLS: grpc-go refuses to send it on a plaintext connection.
type bearerToken string

func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

func (bearerToken) RequireTransportSecurity() bool { return true }
