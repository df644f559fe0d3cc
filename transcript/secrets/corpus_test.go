package secrets

import (
	"strings"
	"testing"
)

// Every case of the corpus, masked whole (MaskString) and as a terminal
// shows it, line by line (LineMasker).
func TestCorpusSecretsAreMasked(t *testing.T) {
	m := NewMasker(nil)
	for _, c := range corpusSecrets {
		t.Run(c.name, func(t *testing.T) {
			out := m.MaskString(c.text)
			shownText := displayed(m, c.text)
			for _, s := range c.secrets {
				if readable(m, c.text, s) {
					t.Errorf("%q\nmasks to %q\nwhich shows %q", c.text, out, s)
				}
				if shown(shownText, c.text, s) {
					t.Errorf("%q\nis displayed %q\nwhich shows %q", c.text, shownText, s)
				}
			}
			if again := m.MaskString(out); again != out {
				t.Errorf("not idempotent: %q -> %q", out, again)
			}
		})
	}
}

func TestCorpusPlainIsLeft(t *testing.T) {
	m := NewMasker(nil)
	for _, c := range corpusPlain {
		t.Run(c.name, func(t *testing.T) {
			if out := m.MaskString(c.text); out != c.text {
				t.Errorf("%q\nmasked to %q", c.text, out)
			}
		})
	}
}

// The corpus has a case for every rule family of gitleaks.
func TestCorpusCoversEveryFamily(t *testing.T) {
	families := strings.Fields(`1password adafruit adobe age airtable algolia alibaba anthropic artifactory asana
		atlassian authress aws azure beamer bitbucket bittrex clickhouse clojars cloudflare codecov cohere coinbase
		confluent contentful curl databricks datadog definednetworking digitalocean discord doppler droneci dropbox
		duffel dynatrace easypost etsy facebook fastly finicity finnhub flickr flutterwave flyio frameio freemius
		freshbooks gcp generic github gitlab gitter gocardless grafana harness hashicorp hashicorp_vault heroku hubspot
		huggingface infracost intercom intra42 jfrog jwt kraken kubernetes kucoin launchdarkly linear linkedin lob
		looker mailchimp mailgun mapbox mattermost maxmind meraki messagebird netlify newrelic notion npm nuget nytimes
		octopusdeploy okta openai openshift perplexity plaid planetscale postman prefect privateai privatekey pulumi
		pypi rapidapi readme rubygems scalingo sendbird sendgrid sendinblue sentry settlemint shippo shopify sidekiq
		slack snyk sonar sourcegraph square squarespace stripe sumologic teams telegram travisci twilio twitch twitter
		typeform yandex zendesk`)
	names := map[string]bool{}
	for _, c := range corpusSecrets {
		names[c.name] = true
	}
	alias := map[string]string{"definednetworking": "defined networking", "hashicorp": "hashicorp terraform",
		"hashicorp_vault": "hashicorp vault", "octopusdeploy": "octopus deploy", "privatekey": "private key",
		"1password": "1password secret key", "aws": "aws access key", "azure": "azure", "cloudflare": "cloudflare origin ca",
		"curl": "curl user", "facebook": "facebook app token", "kubernetes": "kubernetes secret"}
	for _, f := range families {
		name := f
		if a, ok := alias[f]; ok {
			name = a
		}
		if !names[name] {
			t.Errorf("no corpus case for the gitleaks family %s", f)
		}
	}
}
