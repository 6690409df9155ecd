{{/* The prefix of every object's name: the release name, cut for DNS labels. */}}
{{- define "tessera.fullname" -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "tessera.labels" -}}
app.kubernetes.io/name: tessera
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* selector labels of one component: include "tessera.selector" (list . "front-proxy") */}}
{{- define "tessera.selector" -}}
app.kubernetes.io/name: tessera
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "tessera.image" -}}
{{- $root := index . 0 -}}
{{- printf "%s/%s:%s" $root.Values.image.repository (index . 1) (default $root.Chart.AppVersion $root.Values.image.tag) -}}
{{- end -}}

{{- define "tessera.svcDomain" -}}
{{- printf "%s.svc.%s" .Release.Namespace .Values.clusterDomain -}}
{{- end -}}

{{- define "tessera.externalHostname" -}}
{{- default (printf "%s-front-proxy.%s.svc" (include "tessera.fullname" .) .Release.Namespace) .Values.externalHostname -}}
{{- end -}}

{{- define "tessera.externalURL" -}}
{{- if eq (int .Values.externalPort) 443 -}}
{{- printf "https://%s" (include "tessera.externalHostname" .) -}}
{{- else -}}
{{- printf "https://%s:%d" (include "tessera.externalHostname" .) (int .Values.externalPort) -}}
{{- end -}}
{{- end -}}

{{/* host of a shard pod: include "tessera.shardHost" (list . 0) for root, (list . 2) for the second further shard */}}
{{- define "tessera.shardHost" -}}
{{- $root := index . 0 -}}
{{- $set := printf "%s-shard" (include "tessera.fullname" $root) -}}
{{- printf "%s-%d.%s.%s" $set (index . 1) $set (include "tessera.svcDomain" $root) -}}
{{- end -}}

{{- define "tessera.cacheHost" -}}
{{- printf "%s-cache.%s" (include "tessera.fullname" .) (include "tessera.svcDomain" .) -}}
{{- end -}}

{{- define "tessera.caSecret" -}}
{{- default (printf "%s-ca" (include "tessera.fullname" .)) .Values.certificates.caSecret -}}
{{- end -}}

{{- define "tessera.podSettings" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets: {{- toYaml . | nindent 2 }}
{{- end }}
securityContext: {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations: {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity: {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* The flags with which shards and virtual workspaces trust the front-proxy's user headers. */}}
{{- define "tessera.requestHeaderArgs" -}}
- --requestheader-client-ca-file=/etc/tessera/ca/ca.crt
- --requestheader-allowed-names=front-proxy
- --requestheader-username-headers=X-Remote-User
- --requestheader-group-headers=X-Remote-Group
- --requestheader-extra-headers-prefix=X-Remote-Extra-
{{- end -}}

{{/* a kubeconfig of the shard admin's certificate (mounted at /etc/tessera/shard-admin) for a server */}}
{{- define "tessera.kubeconfig" -}}
apiVersion: v1
kind: Config
clusters:
- name: server
  cluster:
    server: {{ . }}
    certificate-authority: /etc/tessera/ca/ca.crt
users:
- name: shard-admin
  user:
    client-certificate: /etc/tessera/shard-admin/tls.crt
    client-key: /etc/tessera/shard-admin/tls.key
contexts:
- name: base
  context: {cluster: server, user: shard-admin}
- name: shard-base
  context: {cluster: server, user: shard-admin}
current-context: base
{{- end -}}

{{/* The certificates of the installation: serving (Secret name to hosts) and
clients (Secret name to user and groups), as YAML. */}}
{{- define "tessera.certificates" -}}
{{- $fn := include "tessera.fullname" . -}}
{{- $ns := .Release.Namespace -}}
{{- $domain := include "tessera.svcDomain" . -}}
{{- $local := list "localhost" "127.0.0.1" -}}
{{- $vwHosts := list -}}
{{- range $i, $_ := until (add 1 (int .Values.shards.count) | int) -}}
{{- $vwHosts = append $vwHosts (include "tessera.shardHost" (list $ $i)) -}}
{{- end -}}
serving:
  {{ $fn }}-cache-tls: {{ list (printf "%s-cache" $fn) (printf "%s-cache.%s.svc" $fn $ns) (include "tessera.cacheHost" .) | toJson }}
  {{ $fn }}-front-proxy-tls: {{ concat (list (printf "%s-front-proxy" $fn) (printf "%s-front-proxy.%s.svc" $fn $ns) (printf "%s-front-proxy.%s" $fn $domain) (include "tessera.externalHostname" .)) .Values.certificates.frontProxyHosts $local | uniq | toJson }}
  {{ $fn }}-virtual-workspaces-tls: {{ concat $vwHosts $local | toJson }}
clients:
  {{ $fn }}-shard-admin: {user: tessera-shard-admin, groups: [system:masters]}
  {{ $fn }}-front-proxy-client: {user: front-proxy, groups: []}
  {{ $fn }}-admin: {user: {{ .Values.admin.user | toJson }}, groups: {{ .Values.admin.groups | default list | toJson }}}
{{- end -}}
