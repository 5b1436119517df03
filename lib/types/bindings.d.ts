// Minimal types for the `bindings` package (it ships none): it finds a
// node-gyp build of an addon by walking up from the caller to its package root.
declare module 'bindings' {
  interface BindingsOptions {
    /** The addon's file name, e.g. 'jaxon_native' (`.node` is added). */
    bindings: string;
    /** Directory holding the package.json; found from the call stack when left out. */
    module_root?: string;
  }
  function bindings(nameOrOptions: string | BindingsOptions): unknown;
  export = bindings;
}
