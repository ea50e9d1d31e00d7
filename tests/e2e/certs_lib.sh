# make_test_certs DIR: a CA, a server certificate for localhost/127.0.0.1, a
# client certificate from that CA, and a rogue self-signed client ("intruder")
# in DIR: ca.pem/.key, server.pem/.key, client.pem/.key, rogue.pem/.key.
# Source after lib.sh (uses fail).
make_test_certs() {
  local C=$1
  mkdir -p "$C"
  (
    cd "$C"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=gpuraid test CA" -keyout ca.key -out ca.pem
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.pem
    openssl req -newkey rsa:2048 -nodes -subj "/CN=operator" -keyout client.key -out client.csr
    openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=intruder" -keyout rogue.key -out rogue.pem
  ) >/dev/null 2>&1 || fail "openssl could not make the test certificates"
}
