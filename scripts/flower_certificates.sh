#!/usr/bin/env bash
# Certificates and keys for a local (loopback) Flower deployment with TLS and
# SuperNode authentication -- for tests and trials, not for production.
#
#   scripts/flower_certificates.sh OUT_DIR [NUM_NODES=3] [HOST=127.0.0.1]
#
# OUT_DIR/ca.crt, ca.key        a self-signed certificate authority (1 day)
# OUT_DIR/server.pem, .key      the SuperLink's certificate, signed by the CA,
#                               valid for HOST and localhost
# OUT_DIR/nodeK, nodeK.pub      an ECDSA (P-384) key pair per SuperNode, in
#                               OpenSSH format: register nodeK.pub with
#                               `flwr supernode register`, start the node with
#                               --auth-supernode-private-key OUT_DIR/nodeK
# Existing files in OUT_DIR are replaced.
set -euo pipefail
out=${1:?usage: $0 OUT_DIR [NUM_NODES] [HOST]}
nodes=${2:-3}
host=${3:-127.0.0.1}
mkdir -p "$out"
chmod 700 "$out"
cd "$out"
openssl req -x509 -newkey rsa:3072 -nodes -days 1 -sha256 \
  -keyout ca.key -out ca.crt -subj "/CN=fedgraph local test CA" 2>/dev/null
openssl req -newkey rsa:3072 -nodes -sha256 \
  -keyout server.key -out server.csr -subj "/CN=$host" 2>/dev/null
if [[ $host =~ ^[0-9.]+$ ]]; then san="IP:$host,DNS:localhost"; else san="DNS:$host,DNS:localhost"; fi
printf 'subjectAltName=%s\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' \
  "$san" > server.ext
openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
  -out server.pem -days 1 -sha256 -extfile server.ext 2>/dev/null
rm -f server.csr server.ext ca.srl
for ((k = 0; k < nodes; k++)); do
  rm -f "node$k" "node$k.pub"
  ssh-keygen -q -t ecdsa -b 384 -N "" -C "fedgraph-node$k" -f "node$k"
done
chmod 600 ./*.key node[0-9]*
chmod 644 ca.crt server.pem ./*.pub
echo "wrote $(ls | tr '\n' ' ')in $out"
