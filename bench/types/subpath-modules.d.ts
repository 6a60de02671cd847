// The project resolves modules the node10 way, which ignores package.json `exports`: these
// name the typings that `exports` points at, for the packages whose typings only it names.
declare module 'vega-lite' {
  export * from 'vega-lite/build/index';
}
declare module 'resumable-stream/ioredis' {
  export * from 'resumable-stream/dist/ioredis';
}
