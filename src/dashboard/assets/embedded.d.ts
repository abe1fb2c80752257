// Types for the dashboard's embedded assets (assets.ts): Bun turns a
// `with { type: "file" }` import into the file's path (in the compiled
// binary, a path inside its embedded file system).
declare module "*.js" {
  const path: string;
  export default path;
}
declare module "*.css" {
  const path: string;
  export default path;
}
declare module "*.svg" {
  const path: string;
  export default path;
}
