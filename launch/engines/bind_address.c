/* Loaded with LD_PRELOAD by launch/engines/bind_address.py: servers that bind the wildcard address bind
 * $ACMELIKE_BIND_ADDRESS instead.
 *
 * Reverb and Launchpad's courier build their gRPC listening address in C++ as "[::]:<port>" and offer no option to
 * choose it; Ray's daemons bind some ports on every interface too. This wraps bind(2): a socket bound to the IPv4
 * wildcard (0.0.0.0) gets the address, one bound to the IPv6 wildcard (::) gets its IPv4-mapped form
 * (::ffff:ADDR: gRPC's dual-stack sockets, which then accept IPv4 connections to ADDR alone), or ::1 when the
 * socket is IPv6-only and ADDR is a loopback address. Any other bind, and every bind while the variable is unset,
 * empty, not an IPv4 address, or 0.0.0.0 itself, passes through unchanged. The variable is read at each call, so a
 * process may set it after it started (os.environ in Python), before its servers start.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_function)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *address, socklen_t length) {
  static bind_function real_bind = NULL;
  if (real_bind == NULL) real_bind = (bind_function)dlsym(RTLD_NEXT, "bind");
  const char *wanted = getenv("ACMELIKE_BIND_ADDRESS");
  struct in_addr target;
  if (address == NULL || wanted == NULL || inet_pton(AF_INET, wanted, &target) != 1 ||
      target.s_addr == htonl(INADDR_ANY)) {
    return real_bind(fd, address, length);
  }
  if (address->sa_family == AF_INET && length >= sizeof(struct sockaddr_in)) {
    struct sockaddr_in ipv4;
    memcpy(&ipv4, address, sizeof ipv4);
    if (ipv4.sin_addr.s_addr == htonl(INADDR_ANY)) {
      ipv4.sin_addr = target;
      return real_bind(fd, (const struct sockaddr *)&ipv4, sizeof ipv4);
    }
  } else if (address->sa_family == AF_INET6 && length >= sizeof(struct sockaddr_in6)) {
    struct sockaddr_in6 ipv6;
    memcpy(&ipv6, address, sizeof ipv6);
    if (IN6_IS_ADDR_UNSPECIFIED(&ipv6.sin6_addr)) {
      int only_ipv6 = 0;
      socklen_t size = sizeof only_ipv6;
      getsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &only_ipv6, &size);
      if (!only_ipv6) {
        memset(&ipv6.sin6_addr, 0, sizeof ipv6.sin6_addr);
        ipv6.sin6_addr.s6_addr[10] = 0xff;
        ipv6.sin6_addr.s6_addr[11] = 0xff;
        memcpy(&ipv6.sin6_addr.s6_addr[12], &target, sizeof target);
      } else if ((ntohl(target.s_addr) >> 24) == 127) {
        ipv6.sin6_addr = in6addr_loopback;
      } else {
        errno = EADDRNOTAVAIL;  // an IPv6-only socket cannot hold an IPv4 address: never every interface instead
        return -1;
      }
      return real_bind(fd, (const struct sockaddr *)&ipv6, sizeof ipv6);
    }
  }
  return real_bind(fd, address, length);
}
