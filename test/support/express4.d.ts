// Express 4 is installed under the alias `express4`; its API is typed like Express 5's for the
// parts the tests use (app, use, get, post, listen).
declare module 'express4' {
  import express from 'express'
  export default express
}
