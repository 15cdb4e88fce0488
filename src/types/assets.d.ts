// Files imported `with { type: "file" }` resolve to a path (embedded in the compiled binary).
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "*swagger-ui-bundle.js" {
  const path: string;
  export default path;
}
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "*.data" {
  const path: string;
  export default path;
}
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.tar.gz" {
  const path: string;
  export default path;
}
