/*
 * pause: the process that holds a pod sandbox's namespaces open.
 *
 * It does nothing but wait. As PID 1 of the pod's PID namespace it reaps zombies (orphans are
 * reparented to it), and it exits when asked to stop: 0 on SIGINT/SIGTERM, as the runtime's
 * StopPodSandbox expects. Built static (gcc -static -Os) so the image needs no libc.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  int saved = errno;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
  errno = saved;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    static const char version[] = "nodelet pause 1.0\n";
    (void)!write(STDOUT_FILENO, version, sizeof version - 1);
    return 0;
  }
  if (getpid() != 1) {
    static const char warn[] = "pause: warning: not running as PID 1, zombies are reaped only for our own children\n";
    (void)!write(STDERR_FILENO, warn, sizeof warn - 1);
  }

  struct sigaction stop = {0};
  stop.sa_handler = on_stop;
  sigemptyset(&stop.sa_mask);
  if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0) return 1;

  struct sigaction child = {0};
  child.sa_handler = on_child;
  sigemptyset(&child.sa_mask);
  child.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  if (sigaction(SIGCHLD, &child, NULL) < 0) return 2;

  for (;;) pause();
  return 42; /* not reached */
}
