/** The pod the API server benches create: the same bytes from the main thread and the load worker. */
export const benchPodBody = (name: string): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'bench', idx: name } },
    spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '3600'], resources: { requests: { cpu: '10m', memory: '16Mi' } } }] },
  });
