// tfe-probe drives modmirror's management API with Debian's go-tfe (0.11.x),
// the library real Terraform Enterprise clients are built on, and prints
// what it got as one JSON object. The test compares that to the data folder.
//
// Usage: tfe-probe -address http://127.0.0.1:PORT -token TOKEN [-username NAME] [-email ADDR]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"

	tfe "github.com/hashicorp/go-tfe"
)

type userView struct {
	ID               string `json:"id"`
	Username         string `json:"username"`
	Email            string `json:"email"`
	UnconfirmedEmail string `json:"unconfirmedEmail"`
	IsServiceAccount bool   `json:"isServiceAccount"`
}

type report struct {
	// RemoteAPIVersion is the TFP-API-Version header NewClient read from GET /api/v2/ping.
	RemoteAPIVersion string    `json:"remoteAPIVersion"`
	Current          *userView `json:"current,omitempty"`
	Updated          *userView `json:"updated,omitempty"`
	// Error is the client's error text: go-tfe maps 401 and 404 to fixed errors whatever the body.
	Error string `json:"error,omitempty"`
}

func view(u *tfe.User) *userView {
	return &userView{ID: u.ID, Username: u.Username, Email: u.Email, UnconfirmedEmail: u.UnconfirmedEmail, IsServiceAccount: u.IsServiceAccount}
}

func run(address, token, username, email string) report {
	var out report
	client, err := tfe.NewClient(&tfe.Config{Address: address, Token: token})
	if err != nil {
		out.Error = "NewClient: " + err.Error()
		return out
	}
	out.RemoteAPIVersion = client.RemoteAPIVersion()
	ctx := context.Background()
	current, err := client.Users.ReadCurrent(ctx)
	if err != nil {
		out.Error = "Users.ReadCurrent: " + err.Error()
		return out
	}
	out.Current = view(current)
	if username == "" && email == "" {
		return out
	}
	options := tfe.UserUpdateOptions{}
	if username != "" {
		options.Username = tfe.String(username)
	}
	if email != "" {
		options.Email = tfe.String(email)
	}
	updated, err := client.Users.Update(ctx, options)
	if err != nil {
		out.Error = "Users.Update: " + err.Error()
		return out
	}
	out.Updated = view(updated)
	return out
}

func main() {
	address := flag.String("address", "", "the server's root URL, e.g. http://127.0.0.1:8080")
	token := flag.String("token", "", "a bearer token")
	username := flag.String("username", "", "Users.Update: the new username")
	email := flag.String("email", "", "Users.Update: the new e-mail address")
	flag.Parse()
	if *address == "" || *token == "" {
		fmt.Fprintln(os.Stderr, "usage: tfe-probe -address URL -token TOKEN [-username NAME] [-email ADDR]")
		os.Exit(2)
	}
	out := run(*address, *token, *username, *email)
	if err := json.NewEncoder(os.Stdout).Encode(out); err != nil {
		os.Exit(1)
	}
	if out.Error != "" {
		os.Exit(1)
	}
}
