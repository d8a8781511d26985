/*
 * nodelet-cni in C: the CNI plugin a container runtime calls. Same behaviour and wire format as
 * nodelet-cni.mjs (which documents them), but starts in about a millisecond instead of a node
 * start-up per ADD and per DEL.
 *
 * It reads the CNI_* environment and the config on stdin, POSTs {"env":{...},"config":<stdin>}
 * to the nodelet CNI service over its unix socket (the config's "socketPath", else
 * $NODELET_CNI_SOCKET, else /run/nodelet/cni.sock), prints the body of the answer and exits 0
 * on HTTP 200, 1 otherwise. An unreachable service is the spec's error 11, "try again later".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_IN (1 << 20)
#define MAX_OUT (8 << 20)
#define TIMEOUT_S 240

extern char **environ;

struct buf { char *p; size_t n, cap; };

static void put(struct buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n + 1) cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) { fputs("nodelet-cni: out of memory\n", stderr); exit(1); }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = 0;
}
static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }

static void put_json_string(struct buf *b, const char *s) {
  puts_(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    char esc[8];
    if (c == '"' || c == '\\') { esc[0] = '\\'; esc[1] = (char)c; put(b, esc, 2); }
    else if (c < 0x20) { snprintf(esc, sizeof esc, "\\u%04x", c); puts_(b, esc); }
    else put(b, (const char *)&c, 1);
  }
  puts_(b, "\"");
}

static char version[32] = "1.0.0";

static int fail(int code, const char *msg, const char *details) {
  struct buf b = {0};
  puts_(&b, "{\"cniVersion\":");
  put_json_string(&b, version);
  char num[32];
  snprintf(num, sizeof num, ",\"code\":%d,\"msg\":", code);
  puts_(&b, num);
  put_json_string(&b, msg);
  if (details) { puts_(&b, ",\"details\":"); put_json_string(&b, details); }
  puts_(&b, "}");
  fwrite(b.p, 1, b.n, stdout);
  return 1;
}

/* Skips one JSON value starting at *p (strings, nesting); returns 0 on malformed input. */
static int skip_value(const char **p, const char *end) {
  int depth = 0;
  while (*p < end) {
    char c = **p;
    if (c == '"') {
      for ((*p)++; *p < end && **p != '"'; (*p)++) if (**p == '\\') (*p)++;
      if (*p >= end) return 0;
      (*p)++;
      if (depth == 0) return 1;
      continue;
    }
    if (c == '{' || c == '[') depth++;
    else if (c == '}' || c == ']') { if (depth == 0) return 1; if (--depth == 0) { (*p)++; return 1; } }
    else if (depth == 0 && (c == ',')) return 1;
    (*p)++;
  }
  return depth == 0;
}

/* Copies the top-level string member `key` of the JSON object in [s, end) into out (no escapes). */
static int top_level_string(const char *s, const char *end, const char *key, char *out, size_t cap) {
  const char *p = s;
  while (p < end && *p != '{') p++;
  if (p >= end) return 0;
  p++;
  size_t klen = strlen(key);
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t' || *p == ',')) p++;
    if (p >= end || *p != '"') return 0;
    const char *k = ++p;
    while (p < end && *p != '"') { if (*p == '\\') p++; p++; }
    if (p >= end) return 0;
    int match = (size_t)(p - k) == klen && memcmp(k, key, klen) == 0;
    p++;
    while (p < end && (*p == ' ' || *p == ':' || *p == '\n' || *p == '\t' || *p == '\r')) p++;
    if (match && p < end && *p == '"') {
      const char *v = ++p;
      while (p < end && *p != '"' && *p != '\\') p++;
      if (p >= end || *p == '\\' || (size_t)(p - v) >= cap) return 0;
      memcpy(out, v, (size_t)(p - v));
      out[p - v] = 0;
      return 1;
    }
    if (!skip_value(&p, end)) return 0;
  }
  return 0;
}

int main(void) {
  const char *command = getenv("CNI_COMMAND");
  if (!command) command = "";
  struct buf in = {0};
  char chunk[65536];
  ssize_t r;
  while ((r = read(0, chunk, sizeof chunk)) > 0) {
    if (in.n + (size_t)r > MAX_IN) return fail(6, "failed to decode network config", "config larger than 1 MiB");
    put(&in, chunk, (size_t)r);
  }
  if (!in.p) puts_(&in, "");
  const char *s = in.p, *end = in.p + in.n;
  char v[32];
  if (top_level_string(s, end, "cniVersion", v, sizeof v)) strcpy(version, v);

  if (strcmp(command, "VERSION") == 0) {
    fputs("{\"cniVersion\":\"1.1.0\",\"supportedVersions\":[\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}", stdout);
    return 0;
  }
  if (strcmp(command, "ADD") && strcmp(command, "DEL") && strcmp(command, "CHECK") && strcmp(command, "STATUS") && strcmp(command, "GC")) {
    char msg[128];
    snprintf(msg, sizeof msg, "unknown CNI_COMMAND: %.64s", command);
    return fail(4, msg, NULL);
  }
  while (s < end && (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t')) s++;
  if (s >= end || *s != '{') return fail(6, "failed to decode network config", "stdin is not a JSON object");

  char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
  if (!top_level_string(s, end, "socketPath", socket_path, sizeof socket_path) || !socket_path[0]) {
    const char *e = getenv("NODELET_CNI_SOCKET");
    snprintf(socket_path, sizeof socket_path, "%s", e && *e ? e : "/run/nodelet/cni.sock");
  }

  struct buf body = {0};
  puts_(&body, "{\"env\":{");
  int first = 1;
  for (char **e = environ; *e; e++) {
    if (strncmp(*e, "CNI_", 4) != 0) continue;
    const char *eq = strchr(*e, '=');
    if (!eq) continue;
    char name[64];
    size_t nl = (size_t)(eq - *e);
    if (nl >= sizeof name) continue;
    memcpy(name, *e, nl);
    name[nl] = 0;
    if (!first) puts_(&body, ",");
    first = 0;
    put_json_string(&body, name);
    puts_(&body, ":");
    put_json_string(&body, eq + 1);
  }
  puts_(&body, "},\"config\":");
  put(&body, s, (size_t)(end - s));
  puts_(&body, "}");

  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path);
  struct timeval tv = {.tv_sec = TIMEOUT_S};
  char details[512];
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) || setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) ||
      connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
    snprintf(details, sizeof details, "nodelet CNI service at %s is unreachable (%s): start the nodelet agent, or check its log", socket_path, strerror(errno));
    return fail(11, "try again later", details);
  }
  struct buf req = {0};
  char head[256];
  snprintf(head, sizeof head, "POST /v1/cni HTTP/1.1\r\nHost: nodelet-cni\r\nContent-Type: application/json\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", body.n);
  puts_(&req, head);
  put(&req, body.p, body.n);
  for (size_t off = 0; off < req.n;) {
    ssize_t w = write(fd, req.p + off, req.n - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      snprintf(details, sizeof details, "writing to %s: %s", socket_path, strerror(errno));
      return fail(11, "try again later", details);
    }
    off += (size_t)w;
  }
  struct buf resp = {0};
  while ((r = read(fd, chunk, sizeof chunk)) != 0) {
    if (r < 0) {
      if (errno == EINTR) continue;
      snprintf(details, sizeof details, "reading from %s: %s", socket_path, errno == EAGAIN ? "no answer within 240 s" : strerror(errno));
      return fail(11, "try again later", details);
    }
    if (resp.n + (size_t)r > MAX_OUT) return fail(11, "try again later", "answer larger than 8 MiB");
    put(&resp, chunk, (size_t)r);
  }
  close(fd);
  int status = 0;
  char *hdr_end = resp.p ? strstr(resp.p, "\r\n\r\n") : NULL;
  if (!hdr_end || sscanf(resp.p, "HTTP/1.%*d %d", &status) != 1) return fail(11, "try again later", "nodelet CNI service sent a malformed HTTP answer");
  const char *payload = hdr_end + 4;
  size_t plen = resp.n - (size_t)(payload - resp.p);
  if (status == 200) {
    fwrite(payload, 1, plen, stdout);
    return 0;
  }
  if (plen == 0 || payload[0] != '{') {
    snprintf(details, sizeof details, "nodelet CNI service answered HTTP %d without a CNI error", status);
    return fail(11, "try again later", details);
  }
  fwrite(payload, 1, plen, stdout);
  return 1;
}
