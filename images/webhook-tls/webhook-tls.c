/*
 * A minimal admission webhook for integration tests, linked statically so it runs in the lab's
 * busybox image: HTTPS on the given port with the given certificate and key. A POST to /mutate is
 * allowed with a JSONPatch that adds the label `mutated-by: <this host>`; every other POST is
 * answered with an AdmissionReview v1 that refuses the request and names this host (the pod), so
 * a test can tell the API server reached the pod. One connection at a time; never exits by itself.
 *
 *   webhook-tls <port> <cert.pem> <key.pem>
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_REQUEST (1 << 20)

static char buf[MAX_REQUEST + 1];

/* Reads one HTTP request (headers and a Content-Length body) into buf; returns its length or -1. */
static int read_request(SSL *ssl) {
  int len = 0;
  int want = -1;
  while (len < MAX_REQUEST) {
    int n = SSL_read(ssl, buf + len, MAX_REQUEST - len);
    if (n <= 0) return -1;
    len += n;
    buf[len] = 0;
    char *end = strstr(buf, "\r\n\r\n");
    if (!end) continue;
    if (want < 0) {
      char *cl = strcasestr(buf, "content-length:");
      want = (int)(end + 4 - buf) + (cl && cl < end ? atoi(cl + 15) : 0);
    }
    if (len >= want) return len;
  }
  return -1;
}

/* Copies the request's uid (the first "uid" of the review: request.uid) into out. */
static void review_uid(const char *req, char *out, size_t size) {
  out[0] = 0;
  const char *p = strstr(req, "\"uid\":\"");
  if (!p) return;
  p += 7;
  size_t i = 0;
  while (p[i] && p[i] != '"' && i + 1 < size) {
    out[i] = p[i];
    i++;
  }
  out[i] = 0;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s <port> <cert.pem> <key.pem>\n", argv[0]);
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx || SSL_CTX_use_certificate_chain_file(ctx, argv[2]) != 1 || SSL_CTX_use_PrivateKey_file(ctx, argv[3], SSL_FILETYPE_PEM) != 1) {
    ERR_print_errors_fp(stderr);
    return 1;
  }
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((unsigned short)atoi(argv[1])), .sin_addr.s_addr = htonl(INADDR_ANY)};
  if (bind(s, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(s, 16) != 0) {
    perror("listen");
    return 1;
  }
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  fprintf(stderr, "webhook-tls listening on %s as %s\n", argv[1], host);
  for (;;) {
    int c = accept(s, NULL, NULL);
    if (c < 0) continue;
    SSL *ssl = SSL_new(ctx);
    SSL_set_fd(ssl, c);
    if (SSL_accept(ssl) == 1 && read_request(ssl) > 0) {
      char uid[128];
      review_uid(buf, uid, sizeof uid);
      char body[2048];
      int n;
      if (strncmp(buf, "POST /mutate", 12) == 0) {
        char patch[512];
        unsigned char b64[1024];
        int p = snprintf(patch, sizeof patch, "[{\"op\":\"add\",\"path\":\"/metadata/labels/mutated-by\",\"value\":\"%s\"}]", host);
        EVP_EncodeBlock(b64, (const unsigned char *)patch, p);
        n = snprintf(body, sizeof body,
                     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"%s\",\"allowed\":true,"
                     "\"patchType\":\"JSONPatch\",\"patch\":\"%s\"}}",
                     uid, b64);
      } else {
        n = snprintf(body, sizeof body,
                     "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"%s\",\"allowed\":false,"
                     "\"status\":{\"code\":403,\"reason\":\"Forbidden\",\"message\":\"refused by pod %s\"}}}",
                     uid, host);
      }
      char head[256];
      int h = snprintf(head, sizeof head, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", n);
      SSL_write(ssl, head, h);
      SSL_write(ssl, body, n);
    } else {
      ERR_print_errors_fp(stderr);
    }
    SSL_shutdown(ssl);
    SSL_free(ssl);
    close(c);
  }
}
