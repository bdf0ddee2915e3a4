package vcsim

// What a datacenter's vSphere has beside the basics, which a node may be
// placed in or marked with (hashicorp/vsphere's vsphere_datastore_cluster,
// vsphere_tag_category/vsphere_tag and vsphere_custom_attribute make the
// same objects): a datastore cluster with Storage DRS on, holding the
// second datastore; a tag category with two tags; a custom attribute for
// VMs. vcsim implements each: StoragePod and Storage DRS's
// RecommendDatastores (simulator/storage_resource_manager.go), the tagging
// API (vapi/simulator), CustomFieldsManager; its PBM endpoint has the
// storage policies of pbm/simulator/profiles.go.

import (
	"context"
	"fmt"
	"net/url"
	"path"

	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/vapi/rest"
	"github.com/vmware/govmomi/vapi/tags"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/types"
)

const (
	// datastoreClusterName holds pooledDatastoreName; its Storage DRS is on.
	datastoreClusterName = "DC0_POD0"
	pooledDatastoreName  = "LocalDS_1"
	tagCategoryName      = "k8s"
	// customAttributeName is a custom attribute of VMs.
	customAttributeName = "k8s-role"
)

// StoragePolicyID is a storage policy vcsim's PBM endpoint has: "vSAN
// Default Storage Policy" (pbm/simulator/profiles.go), a policy every
// vCenter with vSAN has.
const StoragePolicyID = "aa6d5a82-1c88-45da-85d3-3d74b91a5bad"

// Site is the sandbox's datacenter objects beyond the placement defaults.
type Site struct {
	// DatastoreClusterID is the datastore cluster's managed object id
	// ("group-p12"); PooledDatastoreID the datastore in it.
	DatastoreClusterID, PooledDatastoreID string
	// TagIDs are the ids of the tags "windows" and "storage-nic" of the
	// category "k8s" (urn:vmomi:InventoryServiceTag:<uuid>:GLOBAL).
	TagIDs []string
	// CustomAttributeKey is the key (id) of the VM custom attribute
	// "k8s-role", as a decimal string.
	CustomAttributeKey string
}

// buildSite makes the Site's objects as the administrator.
func (s *Server) buildSite(ctx context.Context, c *vim25.Client, finder *find.Finder, folders *object.DatacenterFolders) error {
	pod, err := folders.DatastoreFolder.CreateStoragePod(ctx, datastoreClusterName)
	if err != nil {
		return fmt.Errorf("vcsim: creating datastore cluster %s: %w", datastoreClusterName, err)
	}
	ds, err := finder.Datastore(ctx, pooledDatastoreName)
	if err != nil {
		return fmt.Errorf("vcsim: finding datastore %s: %w", pooledDatastoreName, err)
	}
	task, err := pod.MoveInto(ctx, []types.ManagedObjectReference{ds.Reference()})
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("vcsim: moving %s into %s: %w", pooledDatastoreName, datastoreClusterName, err)
	}
	enabled := true
	task, err = object.NewStorageResourceManager(c).ConfigureStorageDrsForPod(ctx, pod,
		types.StorageDrsConfigSpec{PodConfigSpec: &types.StorageDrsPodConfigSpec{Enabled: &enabled, DefaultVmBehavior: string(types.StorageDrsPodConfigInfoBehaviorAutomated)}}, true)
	if err == nil {
		err = task.Wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("vcsim: turning Storage DRS on for %s: %w", datastoreClusterName, err)
	}
	s.Site.DatastoreClusterID = pod.Reference().Value
	s.Site.PooledDatastoreID = ds.Reference().Value

	fields, err := object.GetCustomFieldsManager(c)
	if err != nil {
		return fmt.Errorf("vcsim: custom fields: %w", err)
	}
	def, err := fields.Add(ctx, customAttributeName, "VirtualMachine", nil, nil)
	if err != nil {
		return fmt.Errorf("vcsim: creating custom attribute %s: %w", customAttributeName, err)
	}
	s.Site.CustomAttributeKey = fmt.Sprint(def.Key)

	rc := rest.NewClient(c)
	if err := rc.Login(ctx, url.UserPassword(s.User, s.Password)); err != nil {
		return fmt.Errorf("vcsim: logging in to the REST API: %w", err)
	}
	defer func() { _ = rc.Logout(context.WithoutCancel(ctx)) }()
	tm := tags.NewManager(rc)
	cat, err := tm.CreateCategory(ctx, &tags.Category{Name: tagCategoryName, Cardinality: "MULTIPLE", AssociableTypes: []string{"VirtualMachine"}})
	if err != nil {
		return fmt.Errorf("vcsim: creating tag category %s: %w", tagCategoryName, err)
	}
	for _, name := range []string{"windows", "storage-nic"} {
		id, err := tm.CreateTag(ctx, &tags.Tag{Name: name, CategoryID: cat})
		if err != nil {
			return fmt.Errorf("vcsim: creating tag %s: %w", name, err)
		}
		s.Site.TagIDs = append(s.Site.TagIDs, id)
	}
	s.logf("vcsim: datastore cluster %s (Storage DRS on, holding %s), tags %v of %s, custom attribute %s (%s)",
		path.Join("/", s.Datacenter, "datastore", datastoreClusterName), pooledDatastoreName, s.Site.TagIDs, tagCategoryName,
		customAttributeName, s.Site.CustomAttributeKey)
	return nil
}
