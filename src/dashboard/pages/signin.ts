// The sign-in form (only when tokens are configured): a token in a password
// field, posted to /signin. Errors say what happened and nothing about the
// token.

import { html } from "../html.ts";
import { bare } from "./layout.ts";

export function signInPage(message: string | null): string {
  return String(
    bare(
      "Sign in",
      html`${message === null ? "" : html`<p class="error" role="alert">${message}</p>`}
<form method="post" action="/signin" id="signin">
<p><label>Token <input type="password" name="token" autocomplete="current-password" required></label></p>
<p><button type="submit">Sign in</button></p>
</form>
<p class="muted">Use a token from the server's config file (auth.tokens). A token with "role": "read" can look but not change anything.</p>`,
    ),
  );
}
